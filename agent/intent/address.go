package intent

import (
	"fmt"
	"net/netip"
	"strings"
)

// peerSep separates an interface address from its point-to-point peer in
// an intent's address: "10.0.0.1 peer 10.0.0.2/32", as `ip addr add`
// writes it.
const peerSep = " peer "

// ParseAddress parses an interface's address: "ADDR/LEN", or a
// point-to-point one, "ADDR peer PEER/LEN" (the length is the peer's,
// as `ip addr add ADDR peer PEER/LEN` has it: the kernel routes
// PEER/LEN through the interface). It returns the address with the
// length, and the peer (the zero Addr for none). Validate checks the
// rest (unicast, one family).
func ParseAddress(s string) (netip.Prefix, netip.Addr, error) {
	local, peer, ok := strings.Cut(s, peerSep)
	if !ok {
		p, err := netip.ParsePrefix(s)
		return p, netip.Addr{}, err
	}
	a, err := netip.ParseAddr(local)
	if err != nil {
		return netip.Prefix{}, netip.Addr{}, fmt.Errorf("the address before peer (without a length): %w", err)
	}
	pp, err := netip.ParsePrefix(peer)
	if err != nil {
		return netip.Prefix{}, netip.Addr{}, fmt.Errorf("the peer (with a length): %w", err)
	}
	if a.Is4() != pp.Addr().Is4() {
		return netip.Prefix{}, netip.Addr{}, fmt.Errorf("the address %s and its peer %s are of different families", a, pp.Addr())
	}
	return netip.PrefixFrom(a, pp.Bits()), pp.Addr(), nil
}

// FormatAddress is an address as ParseAddress reads it.
func FormatAddress(p netip.Prefix, peer netip.Addr) string {
	if !peer.IsValid() {
		return p.String()
	}
	return fmt.Sprintf("%s%s%s/%d", p.Addr(), peerSep, peer, p.Bits())
}

// addrPrefix is the address and length of an interface's address s
// (ParseAddress), and whether it parses.
func addrPrefix(s string) (netip.Prefix, bool) {
	p, _, err := ParseAddress(s)
	return p, err == nil
}
