package items

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// nftProtos are the L4 protocol names a rule may use.
var nftProtos = map[string]int{"icmp": 1, "tcp": 6, "udp": 17, "icmpv6": 58, "sctp": 132}

// NftProtoNumber returns the number of an L4 protocol name or number, or
// -1 for neither.
func NftProtoNumber(s string) int {
	if n, ok := nftProtos[s]; ok {
		return n
	}
	return byteNumber(s)
}

// NftProtoName returns the name of protocol n as a rule spells it: a name
// when it has one, the number otherwise.
func NftProtoName(n int) string { return nameOf(nftProtos, n) }

// ParseNftPrefix parses an address ("192.0.2.1", a /32 or /128) or a
// prefix ("10.0.0.0/8", without host bits).
func ParseNftPrefix(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q is not an address or a prefix", s)
		}
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an address or a prefix", s)
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("%q has host bits set (want %s)", s, p.Masked())
	}
	return p, nil
}

// NftPrefixString spells a prefix as a rule does: a host as an address.
func NftPrefixString(p netip.Prefix) string {
	if p.IsSingleIP() {
		return p.Addr().String()
	}
	return p.String()
}

// ParseNftPorts parses a port ("22") or a range ("1000-2000").
func ParseNftPorts(s string) (lo, hi uint16, err error) {
	a, b, isRange := strings.Cut(s, "-")
	lo, err = parseNftPort(a)
	if err != nil {
		return 0, 0, fmt.Errorf("%q is not a port or a range lo-hi: %w", s, err)
	}
	if !isRange {
		return lo, lo, nil
	}
	hi, err = parseNftPort(b)
	if err != nil || hi <= lo {
		return 0, 0, fmt.Errorf("%q is not a port or a range lo-hi with lo < hi", s)
	}
	return lo, hi, nil
}

func parseNftPort(s string) (uint16, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != s {
		return 0, fmt.Errorf("%q is not a port (1-65535)", s)
	}
	return uint16(n), nil
}

// NftPortsString spells a port range as a rule does.
func NftPortsString(lo, hi uint16) string {
	if lo == hi {
		return strconv.Itoa(int(lo))
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// NftElementRange is an element of a set as a closed range [Lo, Hi] of
// keys in network byte order (equal for one value).
type NftElementRange struct{ Lo, Hi []byte }

// nftElemKey is an element's range of keys in arrays (no allocation):
// the first n bytes of lo and hi.
type nftElemKey struct {
	lo, hi [16]byte
	n      int
}

func (k *nftElemKey) asRange() NftElementRange {
	return NftElementRange{Lo: append([]byte(nil), k.lo[:k.n]...), Hi: append([]byte(nil), k.hi[:k.n]...)}
}

// ParseNftElement parses an element of a set of type typ: an address, or
// (interval sets) a prefix or a range "a-b"; a port, or (interval sets) a
// range "lo-hi".
func ParseNftElement(typ string, interval bool, e string) (NftElementRange, error) {
	k, err := parseNftElementKey(typ, interval, e)
	if err != nil {
		return NftElementRange{}, err
	}
	return k.asRange(), nil
}

// parseNftElementKey is ParseNftElement without an allocation for an
// element it accepts (a set of 100k is parsed on every Equal).
func parseNftElementKey(typ string, interval bool, e string) (nftElemKey, error) {
	if typ == "ipv4_addr" {
		if a, ok := canonicalIPv4(e); ok {
			k := nftElemKey{n: 4}
			k.lo[0], k.lo[1], k.lo[2], k.lo[3] = byte(a>>24), byte(a>>16), byte(a>>8), byte(a)
			k.hi = k.lo
			return k, nil
		}
	}
	switch typ {
	case "ipv4_addr", "ipv6_addr":
		return parseNftAddrElement(typ, interval, e)
	case "inet_service":
		lo, hi, err := ParseNftPorts(e)
		if err != nil {
			return nftElemKey{}, err
		}
		if lo != hi && !interval {
			return nftElemKey{}, fmt.Errorf("%q is a range: the set needs interval", e)
		}
		k := nftElemKey{n: 2}
		k.lo[0], k.lo[1], k.hi[0], k.hi[1] = byte(lo>>8), byte(lo), byte(hi>>8), byte(hi)
		return k, nil
	}
	return nftElemKey{}, fmt.Errorf("%q is not a set type", typ)
}

func parseNftAddrElement(typ string, interval bool, e string) (nftElemKey, error) {
	want4 := typ == "ipv4_addr"
	var lo, hi netip.Addr
	if a, b, ok := strings.Cut(e, "-"); ok {
		var err1, err2 error
		lo, err1 = netip.ParseAddr(a)
		hi, err2 = netip.ParseAddr(b)
		if err1 != nil || err2 != nil || lo.Is4() != hi.Is4() || !lo.Less(hi) {
			return nftElemKey{}, fmt.Errorf("%q is not a range of addresses a-b with a < b", e)
		}
	} else {
		p, err := ParseNftPrefix(e)
		if err != nil {
			return nftElemKey{}, err
		}
		lo, hi = p.Addr(), lastAddr(p)
	}
	if lo.Is4() != want4 {
		return nftElemKey{}, fmt.Errorf("%q is not an element of a set of %s", e, typ)
	}
	if lo != hi && !interval {
		return nftElemKey{}, fmt.Errorf("%q is a prefix or a range: the set needs interval", e)
	}
	return addrKey(lo, hi), nil
}

// addrKey is the key of the addresses [lo, hi] (of one family).
func addrKey(lo, hi netip.Addr) nftElemKey {
	if lo.Is4() {
		k := nftElemKey{n: 4}
		l, h := lo.As4(), hi.As4()
		copy(k.lo[:], l[:])
		copy(k.hi[:], h[:])
		return k
	}
	return nftElemKey{lo: lo.As16(), hi: hi.As16(), n: 16}
}

// lastAddr returns the last address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Addr()
	if a.Is4() && p.Bits() == 32 || !a.Is4() && p.Bits() == 128 {
		return a
	}
	b, n := a.As16(), 16
	if a.Is4() {
		b4 := a.As4()
		copy(b[:], b4[:])
		n = 4
	}
	for i := p.Bits(); i < n*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	if n == 4 {
		return netip.AddrFrom4([4]byte(b[:4]))
	}
	return netip.AddrFrom16(b)
}

// canonicalIPv4 parses an IPv4 address spelled as netip.Addr.String
// spells it (four decimal octets, no leading zero): the fast path of the
// parse of the elements of a set of 100k.
func canonicalIPv4(e string) (uint32, bool) {
	var a uint32
	octets, v, digits := 0, 0, 0
	for i := 0; i <= len(e); i++ {
		if i == len(e) || e[i] == '.' {
			if digits == 0 || octets == 4 {
				return 0, false
			}
			a, octets, v, digits = a<<8|uint32(v), octets+1, 0, 0
			continue
		}
		c := e[i]
		if c < '0' || c > '9' || digits > 0 && v == 0 {
			return 0, false
		}
		if v, digits = v*10+int(c-'0'), digits+1; v > 255 {
			return 0, false
		}
	}
	return a, octets == 4
}

// CheckNftElement says what is wrong with an element of a set, or nil.
func CheckNftElement(typ string, interval bool, e string) error {
	_, err := parseNftElementKey(typ, interval, e)
	return err
}

// NftElementString spells an element read back as a range of keys: a
// value, a prefix when the range is one, or "lo-hi".
func NftElementString(typ string, r NftElementRange) string {
	k := nftElemKey{n: len(r.Lo)}
	copy(k.lo[:], r.Lo)
	copy(k.hi[:], r.Hi)
	return string(appendNftElement(nil, typ, &k))
}

// appendNftElement appends the spelling of NftElementString of k to buf.
func appendNftElement(buf []byte, typ string, k *nftElemKey) []byte {
	if typ == "inet_service" {
		lo, hi := uint16(k.lo[0])<<8|uint16(k.lo[1]), uint16(k.hi[0])<<8|uint16(k.hi[1])
		buf = strconv.AppendUint(buf, uint64(lo), 10)
		if lo != hi {
			buf = append(buf, '-')
			buf = strconv.AppendUint(buf, uint64(hi), 10)
		}
		return buf
	}
	lo, _ := netip.AddrFromSlice(k.lo[:k.n])
	hi, _ := netip.AddrFromSlice(k.hi[:k.n])
	if lo == hi {
		return lo.AppendTo(buf)
	}
	for bits := lo.BitLen(); bits >= 0; bits-- {
		p := netip.PrefixFrom(lo, bits)
		if p.Masked().Addr() == lo && lastAddr(p) == hi {
			return p.AppendTo(buf)
		}
	}
	buf = lo.AppendTo(buf)
	buf = append(buf, '-')
	return hi.AppendTo(buf)
}
