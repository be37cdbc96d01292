package ethtool

import (
	"maps"
	"slices"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/items"
)

// checkVethLinkModes checks a veth's LINKMODES_GET answer.
func checkVethLinkModes(t *testing.T, b []byte) {
	t.Helper()
	lm, err := DecodeLinkModes(b)
	if err != nil {
		t.Fatal(err)
	}
	v := lm.values()
	if want := map[string]uint32{"speed": 10000, "duplex": items.EthtoolDuplexFull, "autoneg": 0}; !maps.Equal(v.Cur, want) {
		t.Errorf("cur = %v, want %v", v.Cur, want)
	}
	if len(v.Sets["advertise"]) != 0 || len(v.Allowed["advertise"]) != 0 {
		t.Errorf("a veth's modes: advertised %v, supported %v", v.Sets, v.Allowed)
	}
}

// e1000Answer is a LINKMODES_GET answer as an e1000 gives it (verbose
// OURS: the supported modes listed, the advertised with a value), with
// bits above the library's table (10baseT1BRR/Full, bit 102) supported.
func e1000Answer(t *testing.T, advertised ...string) []byte {
	t.Helper()
	supported := []string{"10baseT/Half", "10baseT/Full", "100baseT/Half", "100baseT/Full", "1000baseT/Full", "Autoneg", "TP", "10baseT1BRR/Full"}
	ae := netlink.NewAttributeEncoder()
	ae.Uint8(unix.ETHTOOL_A_LINKMODES_AUTONEG, 1)
	ae.Nested(unix.ETHTOOL_A_LINKMODES_OURS, func(bae *netlink.AttributeEncoder) error {
		bae.Uint32(unix.ETHTOOL_A_BITSET_SIZE, uint32(len(items.EthtoolLinkModes)))
		bae.Nested(unix.ETHTOOL_A_BITSET_BITS, func(lae *netlink.AttributeEncoder) error {
			for _, name := range supported {
				lae.Nested(unix.ETHTOOL_A_BITSET_BITS_BIT, func(nae *netlink.AttributeEncoder) error {
					nae.Uint32(unix.ETHTOOL_A_BITSET_BIT_INDEX, uint32(slices.Index(items.EthtoolLinkModes, name)))
					nae.String(unix.ETHTOOL_A_BITSET_BIT_NAME, name)
					if slices.Contains(advertised, name) {
						nae.Flag(unix.ETHTOOL_A_BITSET_BIT_VALUE, true)
					}
					return nil
				})
			}
			return nil
		})
		return nil
	})
	ae.Uint32(unix.ETHTOOL_A_LINKMODES_SPEED, 0xffffffff) // SPEED_UNKNOWN: no carrier
	ae.Uint8(unix.ETHTOOL_A_LINKMODES_DUPLEX, 0xff)
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeLinkModesAndAdvertising: the supported and advertised speed
// modes of an answer (Autoneg and TP are not speed modes), an unknown
// speed and duplex left out, and the bitset a write sends: exactly the
// wanted modes, with the other advertised bits kept; a mode the NIC does
// not support is EINVAL.
func TestDecodeLinkModesAndAdvertising(t *testing.T) {
	lm, err := DecodeLinkModes(e1000Answer(t, "1000baseT/Full", "100baseT/Full", "Autoneg", "TP"))
	if err != nil {
		t.Fatal(err)
	}
	v := lm.values()
	if want := map[string]uint32{"autoneg": 1}; !maps.Equal(v.Cur, want) {
		t.Errorf("cur = %v, want %v", v.Cur, want)
	}
	if want := []string{"1000baseT/Full", "100baseT/Full"}; !slices.Equal(v.Sets["advertise"], want) {
		t.Errorf("advertised %v, want %v", v.Sets["advertise"], want)
	}
	if want := []string{"1000baseT/Full", "100baseT/Full", "100baseT/Half", "10baseT/Full", "10baseT/Half", "10baseT1BRR/Full"}; !slices.Equal(v.Allowed["advertise"], want) {
		t.Errorf("supported %v, want %v", v.Allowed["advertise"], want)
	}
	bits, err := lm.advertising([]string{"10baseT/Full", "10baseT1BRR/Full"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, name := range items.EthtoolLinkModes {
		if bits.Bit(i) == 1 {
			got = append(got, name)
		}
	}
	if want := []string{"10baseT/Full", "Autoneg", "TP", "10baseT1BRR/Full"}; !slices.Equal(got, want) {
		t.Errorf("advertising bits %v, want %v", got, want)
	}
	if _, err := lm.advertising([]string{"10000baseT/Full"}); err == nil {
		t.Error("an unsupported mode made a bitset")
	}
}

// TestDecodeLinkModesRefusesBadBits: a mode name outside the kernel's
// alphabet and a bit outside the bitset are malformed answers.
func TestDecodeLinkModesRefusesBadBits(t *testing.T) {
	for name, bit := range map[string]func(*netlink.AttributeEncoder) error{
		"bad name": func(nae *netlink.AttributeEncoder) error {
			nae.Uint32(unix.ETHTOOL_A_BITSET_BIT_INDEX, 1)
			nae.String(unix.ETHTOOL_A_BITSET_BIT_NAME, "10baseT Full;")
			return nil
		},
		"outside": func(nae *netlink.AttributeEncoder) error {
			nae.Uint32(unix.ETHTOOL_A_BITSET_BIT_INDEX, 200)
			nae.String(unix.ETHTOOL_A_BITSET_BIT_NAME, "10baseT/Full")
			return nil
		},
	} {
		ae := netlink.NewAttributeEncoder()
		ae.Nested(unix.ETHTOOL_A_LINKMODES_OURS, func(bae *netlink.AttributeEncoder) error {
			bae.Uint32(unix.ETHTOOL_A_BITSET_SIZE, 103)
			bae.Nested(unix.ETHTOOL_A_BITSET_BITS, func(lae *netlink.AttributeEncoder) error {
				lae.Nested(unix.ETHTOOL_A_BITSET_BITS_BIT, bit)
				return nil
			})
			return nil
		})
		b, _ := ae.Encode()
		if _, err := DecodeLinkModes(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestAdvertisingClearsAModeNewerThanTheList: a speed mode a newer
// kernel names (not in items.EthtoolLinkModes) is not shown, and a write
// of exactly the intent's modes does not keep it advertised; a newer
// non-speed bit (no '/') stays.
func TestAdvertisingClearsAModeNewerThanTheList(t *testing.T) {
	lm := LinkModes{Cur: map[string]uint32{}, Modes: map[string]Bit{
		"1000baseT/Full": {Index: 5, On: true}, "1600000baseCR8/Full": {Index: 110, On: true}, "NewFEC": {Index: 111, On: true},
	}}
	if v := lm.values(); !slices.Equal(v.Sets["advertise"], []string{"1000baseT/Full"}) || !slices.Equal(v.Allowed["advertise"], []string{"1000baseT/Full"}) {
		t.Errorf("values %+v", v)
	}
	bits, err := lm.advertising([]string{"1000baseT/Full"})
	if err != nil || bits.Bit(5) != 1 || bits.Bit(110) != 0 || bits.Bit(111) != 1 {
		t.Errorf("advertising %v, %v: want bits 5 and 111", bits, err)
	}
}
