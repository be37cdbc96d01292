package ethtool

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
)

// LinkModes are a LINKMODES_GET answer: speed, duplex and autoneg as
// the link group's settings (what is unknown left out), and every link
// mode the NIC supports, by the kernel's name, with its bit and whether
// it is advertised.
type LinkModes struct {
	Cur   map[string]uint32
	Modes map[string]Bit
}

// Bit is one bit of a verbose bitset: its index and value.
type Bit struct {
	Index uint32
	On    bool
}

// EncodeLinkModesGet is the LINKMODES_GET request for the link, with
// verbose bitsets: the kernel names each bit, and OURS lists the
// supported modes (its mask), each with its advertised value.
//
// This codec reads link modes rather than the library's LinkMode: the
// library applies the mask to the values, so the supported modes are
// lost, and it indexes a table of 92 modes by bit, which a NIC
// advertising a newer mode (800G, 10baseT1S: bits 92 to 102) would run
// past.
func EncodeLinkModesGet(ifindex int) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	encodeHeader(ae, unix.ETHTOOL_A_LINKMODES_HEADER, ifindex, 0)
	return ae.Encode()
}

// DecodeLinkModes reads a LINKMODES_GET answer.
func DecodeLinkModes(b []byte) (LinkModes, error) {
	lm := LinkModes{Cur: map[string]uint32{}, Modes: map[string]Bit{}}
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return lm, fmt.Errorf("link modes: %w: %v", errBadAnswer, err)
	}
	for ad.Next() {
		if err := lm.take(ad.Type(), ad.Bytes()); err != nil {
			return lm, fmt.Errorf("link modes: %w: %v", errBadAnswer, err)
		}
	}
	if err := ad.Err(); err != nil {
		return lm, fmt.Errorf("link modes: %w: %v", errBadAnswer, err)
	}
	return lm, nil
}

// take stores one attribute of the answer; values out of their range
// (an unknown speed or duplex, no carrier) are left out.
func (lm *LinkModes) take(typ uint16, b []byte) error {
	switch typ {
	case unix.ETHTOOL_A_LINKMODES_SPEED:
		v, err := fixed(b, 4)
		if err == nil && v > 0 && v <= maxSpeed {
			lm.Cur["speed"] = v
		}
		return err
	case unix.ETHTOOL_A_LINKMODES_DUPLEX:
		v, err := fixed(b, 1)
		if err == nil && v <= items.EthtoolDuplexFull {
			lm.Cur["duplex"] = v
		}
		return err
	case unix.ETHTOOL_A_LINKMODES_AUTONEG:
		v, err := fixed(b, 1)
		if err == nil && v <= 1 {
			lm.Cur["autoneg"] = v
		}
		return err
	case unix.ETHTOOL_A_LINKMODES_OURS:
		modes, err := decodeBitList(b, validModeName)
		lm.Modes = modes
		return err
	}
	return nil
}

// maxSpeed bounds a reported speed (Mb/s): 1.6 Tb/s is the fastest
// link mode the kernel knows; above, or negative, the speed is unknown.
const maxSpeed = 1_600_000

// validModeName accepts the kernel's link mode names: 1 to 32 bytes of
// letters, digits, '/' and '_'.
func validModeName(s string) bool {
	if s == "" || len(s) > maxNameLen {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '/' || c == '_') {
			return false
		}
	}
	return true
}

// values are the answer as the link group's Values: the advertised
// speed and duplex modes as the set "advertise", the supported ones as
// what it allows. A speed mode a newer kernel names that
// items.EthtoolLinkModes lacks is left out of both (no intent can name
// it), and a write does not keep it (advertising).
func (lm LinkModes) values() Values {
	var adv, sup []string
	for name, b := range lm.Modes {
		if !items.EthtoolSpeedMode(name) {
			continue
		}
		sup = append(sup, name)
		if b.On {
			adv = append(adv, name)
		}
	}
	slices.Sort(adv)
	slices.Sort(sup)
	return Values{Cur: lm.Cur, Max: map[string]uint32{}, Sets: map[string][]string{"advertise": adv}, Allowed: map[string][]string{"advertise": sup}}
}

// advertising is the bitset that advertises exactly the speed and
// duplex modes want (a mode's name has a '/': "1000baseT/Full", also one
// newer than items.EthtoolLinkModes) and keeps the other advertised bits
// (Autoneg, TP, Pause, Asym_Pause, the FEC modes) as they are; a wanted
// mode the NIC does not support is EINVAL, as a driver answers.
func (lm LinkModes) advertising(want []string) (*big.Int, error) {
	bits := new(big.Int)
	for name, b := range lm.Modes {
		if b.On && !strings.Contains(name, "/") {
			bits.SetBit(bits, int(b.Index), 1)
		}
	}
	for _, name := range want {
		b, ok := lm.Modes[name]
		if !ok {
			return nil, fmt.Errorf("advertising %s: %w", name, unix.EINVAL)
		}
		bits.SetBit(bits, int(b.Index), 1)
	}
	return bits, nil
}
