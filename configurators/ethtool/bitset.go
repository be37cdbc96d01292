package ethtool

import (
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Bounds on a bitset answer: the kernel's feature set has about 70 bits
// and its names are ETH_GSTRING_LEN (32) bytes at most.
const (
	maxBits    = 1024
	maxNameLen = 32
)

// decodeBitset reads a verbose bitset (the form the kernel sends when the
// request does not ask for compact ones) of feature names and returns
// the names of the set bits.
func decodeBitset(b []byte) (map[string]bool, error) {
	list, err := decodeBitList(b, validName)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for name, bit := range list {
		if bit.On {
			set[name] = true
		}
	}
	return set, nil
}

// decodeBitList reads a verbose bitset: a list of bits, each with its
// index, name (checked by valid) and, unless the bitset is a plain list
// (NOMASK), a value flag. It returns every bit listed (with a mask, the
// mask's bits) by name.
func decodeBitList(b []byte, valid func(string) bool) (map[string]Bit, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	var size uint32
	var bits []byte
	nomask := false
	for ad.Next() {
		switch ad.Type() {
		case unix.ETHTOOL_A_BITSET_NOMASK:
			nomask = true
		case unix.ETHTOOL_A_BITSET_SIZE:
			size = ad.Uint32()
		case unix.ETHTOOL_A_BITSET_BITS:
			bits = ad.Bytes()
		case unix.ETHTOOL_A_BITSET_VALUE, unix.ETHTOOL_A_BITSET_MASK:
			return nil, fmt.Errorf("compact bitset where a verbose one was asked for")
		}
	}
	if err := ad.Err(); err != nil {
		return nil, err
	}
	if size > maxBits {
		return nil, fmt.Errorf("bitset of %d bits, more than %d", size, maxBits)
	}
	return decodeBits(bits, size, nomask, valid)
}

// decodeBits reads the BITS list of a verbose bitset of size bits.
func decodeBits(b []byte, size uint32, nomask bool, valid func(string) bool) (map[string]Bit, error) {
	set := map[string]Bit{}
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	for ad.Next() {
		if ad.Type() != unix.ETHTOOL_A_BITSET_BITS_BIT {
			continue
		}
		name, bit, err := decodeBit(ad.Bytes(), size, valid)
		if err != nil {
			return nil, err
		}
		if name == "" {
			continue // a bit the kernel leaves unnamed (unused)
		}
		if _, dup := set[name]; dup {
			return nil, fmt.Errorf("bit %q listed twice", name)
		}
		bit.On = bit.On || nomask
		set[name] = bit
	}
	if err := ad.Err(); err != nil {
		return nil, err
	}
	return set, nil
}

// decodeBit reads one bit: its name (empty for the kernel's unused bits;
// otherwise as valid accepts), its index (below the bitset's size) and
// its value flag.
func decodeBit(b []byte, size uint32, valid func(string) bool) (string, Bit, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return "", Bit{}, err
	}
	var name string
	bit := Bit{Index: ^uint32(0)}
	for ad.Next() {
		switch ad.Type() {
		case unix.ETHTOOL_A_BITSET_BIT_INDEX:
			bit.Index = ad.Uint32()
		case unix.ETHTOOL_A_BITSET_BIT_NAME:
			name = ad.String()
		case unix.ETHTOOL_A_BITSET_BIT_VALUE:
			bit.On = true
		}
	}
	if err := ad.Err(); err != nil {
		return "", Bit{}, err
	}
	if bit.Index >= size {
		return "", Bit{}, fmt.Errorf("bit %q: index %d outside a bitset of %d bits", name, bit.Index, size)
	}
	if name != "" && !valid(name) {
		return "", Bit{}, fmt.Errorf("bit %d: bad name %q", bit.Index, name)
	}
	return name, bit, nil
}

// validName accepts the kernel's feature and mode names: 1 to 32 bytes
// of lowercase letters, digits, '-', '_' and '.'.
func validName(s string) bool {
	if s == "" || len(s) > maxNameLen {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// encodeBitset writes a verbose bitset of the named bits. With a mask
// (nomask false) each named bit carries its value and the kernel leaves
// the unnamed bits alone; as a plain list (nomask true, the
// ETHTOOL_A_BITSET_NOMASK flag) the set bits are the ones named true and
// the kernel clears every other bit, so an empty list clears them all.
func encodeBitset(ae *netlink.AttributeEncoder, attr uint16, bits map[string]bool, nomask bool) {
	ae.Nested(attr, func(bae *netlink.AttributeEncoder) error {
		if nomask {
			bae.Flag(unix.ETHTOOL_A_BITSET_NOMASK, true)
		}
		bae.Nested(unix.ETHTOOL_A_BITSET_BITS, func(lae *netlink.AttributeEncoder) error {
			for _, name := range sortedKeys(bits) {
				if nomask && !bits[name] {
					continue
				}
				lae.Nested(unix.ETHTOOL_A_BITSET_BITS_BIT, func(nae *netlink.AttributeEncoder) error {
					nae.String(unix.ETHTOOL_A_BITSET_BIT_NAME, name)
					if bits[name] && !nomask {
						nae.Flag(unix.ETHTOOL_A_BITSET_BIT_VALUE, true)
					}
					return nil
				})
			}
			return nil
		})
		return nil
	})
}
