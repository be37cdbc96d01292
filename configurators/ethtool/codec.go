package ethtool

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Field is one setting of a Group: its name in the intent, the attribute
// carrying its value and, when the kernel reports one, the attribute
// carrying its maximum.
type Field struct {
	Name string
	Attr uint16
	// Max is the attribute of the driver's maximum, 0 when none.
	Max uint16
	// Flag marks a u8 boolean (0 or 1); other fields are u32.
	Flag bool
}

// Group is one ethtool netlink message pair of plain u32/u8 settings.
type Group struct {
	Name   string
	Get    uint8
	Set    uint8
	Header uint16
	Fields []Field
}

// The groups of settings this codec carries.
var (
	Channels = Group{"channels", unix.ETHTOOL_MSG_CHANNELS_GET, unix.ETHTOOL_MSG_CHANNELS_SET, unix.ETHTOOL_A_CHANNELS_HEADER, []Field{
		{Name: "rx", Attr: unix.ETHTOOL_A_CHANNELS_RX_COUNT, Max: unix.ETHTOOL_A_CHANNELS_RX_MAX},
		{Name: "tx", Attr: unix.ETHTOOL_A_CHANNELS_TX_COUNT, Max: unix.ETHTOOL_A_CHANNELS_TX_MAX},
		{Name: "other", Attr: unix.ETHTOOL_A_CHANNELS_OTHER_COUNT, Max: unix.ETHTOOL_A_CHANNELS_OTHER_MAX},
		{Name: "combined", Attr: unix.ETHTOOL_A_CHANNELS_COMBINED_COUNT, Max: unix.ETHTOOL_A_CHANNELS_COMBINED_MAX},
	}}
	Rings = Group{"rings", unix.ETHTOOL_MSG_RINGS_GET, unix.ETHTOOL_MSG_RINGS_SET, unix.ETHTOOL_A_RINGS_HEADER, []Field{
		{Name: "rx", Attr: unix.ETHTOOL_A_RINGS_RX, Max: unix.ETHTOOL_A_RINGS_RX_MAX},
		{Name: "rx-mini", Attr: unix.ETHTOOL_A_RINGS_RX_MINI, Max: unix.ETHTOOL_A_RINGS_RX_MINI_MAX},
		{Name: "rx-jumbo", Attr: unix.ETHTOOL_A_RINGS_RX_JUMBO, Max: unix.ETHTOOL_A_RINGS_RX_JUMBO_MAX},
		{Name: "tx", Attr: unix.ETHTOOL_A_RINGS_TX, Max: unix.ETHTOOL_A_RINGS_TX_MAX},
	}}
	Coalesce = Group{"coalesce", unix.ETHTOOL_MSG_COALESCE_GET, unix.ETHTOOL_MSG_COALESCE_SET, unix.ETHTOOL_A_COALESCE_HEADER, []Field{
		{Name: "rx-usecs", Attr: unix.ETHTOOL_A_COALESCE_RX_USECS},
		{Name: "tx-usecs", Attr: unix.ETHTOOL_A_COALESCE_TX_USECS},
		{Name: "rx-frames", Attr: unix.ETHTOOL_A_COALESCE_RX_MAX_FRAMES},
		{Name: "tx-frames", Attr: unix.ETHTOOL_A_COALESCE_TX_MAX_FRAMES},
		{Name: "adaptive-rx", Attr: unix.ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, Flag: true},
		{Name: "adaptive-tx", Attr: unix.ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX, Flag: true},
	}}
	Pause = Group{"pause", unix.ETHTOOL_MSG_PAUSE_GET, unix.ETHTOOL_MSG_PAUSE_SET, unix.ETHTOOL_A_PAUSE_HEADER, []Field{
		{Name: "autoneg", Attr: unix.ETHTOOL_A_PAUSE_AUTONEG, Flag: true},
		{Name: "rx", Attr: unix.ETHTOOL_A_PAUSE_RX, Flag: true},
		{Name: "tx", Attr: unix.ETHTOOL_A_PAUSE_TX, Flag: true},
	}}
)

// Groups are the codec's groups by name.
var Groups = map[string]Group{"channels": Channels, "rings": Rings, "coalesce": Coalesce, "pause": Pause}

// Field returns the group's field of that name.
func (g Group) Field(name string) (Field, bool) {
	for _, f := range g.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Values are a group's settings as the kernel reported them: the current
// value of each field the driver answered, and the maxima it reported.
// Sets are the group's set-valued settings (link: "advertise", the
// advertised speed and duplex modes), names sorted, and Allowed the names
// each may hold (the modes the NIC supports).
type Values struct {
	Cur     map[string]uint32
	Max     map[string]uint32
	Sets    map[string][]string
	Allowed map[string][]string
}

var errBadAnswer = errors.New("malformed ethtool answer")

// encodeHeader puts the request header naming the link by ifindex.
func encodeHeader(ae *netlink.AttributeEncoder, attr uint16, ifindex int, flags uint32) {
	ae.Nested(attr, func(nae *netlink.AttributeEncoder) error {
		nae.Uint32(unix.ETHTOOL_A_HEADER_DEV_INDEX, uint32(ifindex))
		if flags != 0 {
			nae.Uint32(unix.ETHTOOL_A_HEADER_FLAGS, flags)
		}
		return nil
	})
}

// EncodeGet is the attributes of g's GET request for the link.
func EncodeGet(g Group, ifindex int) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	encodeHeader(ae, g.Header, ifindex, 0)
	return ae.Encode()
}

// EncodeSet is the attributes of g's SET request: only the named fields,
// so the kernel keeps the others.
func EncodeSet(g Group, ifindex int, set map[string]uint32) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	encodeHeader(ae, g.Header, ifindex, 0)
	for _, f := range g.Fields {
		v, ok := set[f.Name]
		if !ok {
			continue
		}
		if f.Flag {
			if v > 1 {
				return nil, fmt.Errorf("%s %s: %d is not a boolean", g.Name, f.Name, v)
			}
			ae.Uint8(f.Attr, uint8(v))
		} else {
			ae.Uint32(f.Attr, v)
		}
		delete(set, f.Name)
	}
	for name := range set {
		return nil, fmt.Errorf("%s has no setting %q", g.Name, name)
	}
	return ae.Encode()
}

// DecodeGet reads g's GET reply. Unknown attributes are skipped; a field
// of the wrong size, a flag above 1 or a value above its reported
// maximum is an error.
func DecodeGet(g Group, b []byte) (Values, error) {
	v := Values{Cur: map[string]uint32{}, Max: map[string]uint32{}}
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return v, fmt.Errorf("%s: %w: %v", g.Name, errBadAnswer, err)
	}
	for ad.Next() {
		if err := v.take(g, ad.Type(), ad.Bytes()); err != nil {
			return v, err
		}
	}
	if err := ad.Err(); err != nil {
		return v, fmt.Errorf("%s: %w: %v", g.Name, errBadAnswer, err)
	}
	return v, v.check(g)
}

// take stores one attribute of a reply if it is one of g's fields.
func (v Values) take(g Group, typ uint16, b []byte) error {
	for _, f := range g.Fields {
		into, size := v.Cur, 4
		switch typ {
		case f.Attr:
			if f.Flag {
				size = 1
			}
		case f.Max:
			if f.Max == 0 {
				continue
			}
			into = v.Max
		default:
			continue
		}
		val, err := fixed(b, size)
		if err != nil {
			return fmt.Errorf("%s %s: %w: %v", g.Name, f.Name, errBadAnswer, err)
		}
		into[f.Name] = val
		return nil
	}
	return nil
}

// check refuses an answer whose values contradict themselves.
func (v Values) check(g Group) error {
	for _, f := range g.Fields {
		cur, ok := v.Cur[f.Name]
		if !ok {
			continue
		}
		if f.Flag && cur > 1 {
			return fmt.Errorf("%s %s: %w: flag value %d", g.Name, f.Name, errBadAnswer, cur)
		}
		if max, ok := v.Max[f.Name]; ok && cur > max {
			return fmt.Errorf("%s %s: %w: %d above the reported maximum %d", g.Name, f.Name, errBadAnswer, cur, max)
		}
	}
	return nil
}

// fixed reads a u8 or a u32 in the host's byte order, as netlink sends.
func fixed(b []byte, size int) (uint32, error) {
	if len(b) != size {
		return 0, fmt.Errorf("%d bytes, want %d", len(b), size)
	}
	if size == 1 {
		return uint32(b[0]), nil
	}
	return binary.NativeEndian.Uint32(b), nil
}
