package items

import (
	"net/netip"
	"strings"
)

// The rules for names and addresses that come from outside the intent as
// much as from it: the intent's validation (agent/intent) and the checks
// of a lease (items/lease4, configurators/dhcp6) and of resolv.conf
// (configurators/dns) call these, so that a server is held to the
// operator's rules.

// MaxDomainName is the longest DNS name, in bytes without a final dot
// (RFC 1035 2.3.4: 255 octets on the wire).
const MaxDomainName = 253

// IsDomainName reports whether s is a DNS host or domain name (RFC 1123
// 2.1): dot-separated labels of 1 to 63 letters, digits and '-', neither
// starting nor ending with '-', at most MaxDomainName bytes, an optional
// final dot. Nothing else (no space, no control character, no byte above
// 0x7e) can be in one, so a name that passes never starts a new line or
// field of a file.
func IsDomainName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > MaxDomainName {
		return false
	}
	for l := range strings.SplitSeq(s, ".") {
		if !isLabel(l) {
			return false
		}
	}
	return true
}

// isLabel reports whether l is one label of a host name.
func isLabel(l string) bool {
	if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// IsUnicast reports whether a can be an interface's or a neighbour's
// address: global unicast or link-local unicast (neither unspecified,
// loopback, multicast nor the IPv4 limited broadcast).
func IsUnicast(a netip.Addr) bool {
	return a.IsGlobalUnicast() || a.IsLinkLocalUnicast()
}

// reserved4 are the IPv4 blocks no host is numbered from: "this network"
// (0.0.0.0/8, RFC 1122 3.2.1.3) and the reserved class E (240.0.0.0/4,
// RFC 1112 4), which netip counts as global unicast.
var reserved4 = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("240.0.0.0/4")}

// IsRoutable reports whether a is an address a server may hand out for a
// host, a router or a name server on a link: IsUnicast, not link-local
// (a DHCP server does not assign those: they are the link's own), not
// an IPv4-mapped IPv6 address, without a zone, and outside reserved4.
func IsRoutable(a netip.Addr) bool {
	if !a.IsGlobalUnicast() || a.Zone() != "" || a.Is4In6() {
		return false
	}
	for _, p := range reserved4 {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// SearchDomains returns the search domains of list that are DNS names
// (IsDomainName), without a second of the same name (compared
// without case and final dot), at most MaxSearch; drop is told of
// each left out. The search domains of a DHCPv4 lease (options 15, 119) and of a DHCPv6
// one (option 24) are held to it.
func SearchDomains(list []string, drop func(format string, args ...any)) []string {
	var keep []string
	seen := map[string]bool{}
	for _, d := range list {
		key := strings.ToLower(strings.TrimSuffix(d, "."))
		switch {
		case !IsDomainName(d):
			drop("search domain %q: not a DNS name", d)
		case seen[key]:
		case len(keep) == MaxSearch:
			drop("search domain %s: more than %d", d, MaxSearch)
		default:
			seen[key] = true
			keep = append(keep, d)
		}
	}
	return keep
}
