package intent

import (
	"net/netip"
	"strings"

	"github.com/netagent/netagent/items"
)

// DNS is the intent's "dns" section: the host's name servers and search
// domains. The agent merges them with those of its leases (DHCPv4,
// DHCPv6) and writes them to the resolv.conf it owns (--resolv-conf), or
// hands them to systemd-resolved; see package configurators/dns for the
// order and the merge rules.
//
//   - nameservers: IPv4 or IPv6 addresses, no duplicates; an IPv6
//     link-local one needs a zone ("fe80::1%eth0"). At most MaxNameservers
//     are used (glibc reads three); more is an error here, since they
//     would be dropped.
//   - search: domain names, no duplicates, at most MaxSearch domains and
//     MaxSearchChars characters in all (glibc's limits).
//
// Only one intent file may have a dns section.
type DNS struct {
	Nameservers []string `json:"nameservers,omitempty"`
	Search      []string `json:"search,omitempty"`

	Origin Origin `json:"-"`
}

// Limits of resolv.conf as glibc reads it (items.MaxNameservers, ...).
const (
	MaxNameservers = items.MaxNameservers
	MaxSearch      = items.MaxSearch
	MaxSearchChars = items.MaxSearchChars
)

// The dns section: one object, from one file.
var dnsSection = section{
	path:    "dns",
	check:   (*checker).dns,
	merge:   (*merger).dns,
	without: (*merger).withoutDNS,
}

// dnsOrigin returns where the dns section was defined.
func (c *checker) dnsOrigin() Origin {
	if c.in.DNS.Origin != (Origin{}) {
		return c.in.DNS.Origin
	}
	return Origin{File: c.in.file, Path: "dns"}
}

// dns checks the name servers and search domains.
func (c *checker) dns() {
	d := c.in.DNS
	if d == nil {
		return
	}
	at := c.dnsOrigin()
	c.nameservers(at.field("nameservers"), d.Nameservers)
	c.searchDomains(at.field("search"), d.Search)
}

// nameservers checks each address and their number.
func (c *checker) nameservers(o Origin, list []string) {
	if len(list) > MaxNameservers {
		c.fail(o, "%d name servers: resolv.conf readers use at most %d", len(list), MaxNameservers)
	}
	seen := map[netip.Addr]bool{}
	for i, s := range list {
		a, err := netip.ParseAddr(s)
		switch {
		case err != nil:
			c.fail(o.index(i), "%q is not an IP address", s)
		case a.IsUnspecified() || a.IsMulticast():
			c.fail(o.index(i), "%s is not a unicast address", s)
		case a.Is6() && a.IsLinkLocalUnicast() && a.Zone() == "":
			c.fail(o.index(i), "%s is link-local: give its interface as a zone (%s%%eth0)", s, s)
		case seen[a]:
			c.fail(o.index(i), "%s is listed twice", s)
		}
		seen[a] = true
	}
}

// searchDomains checks each domain, duplicates and glibc's limits.
func (c *checker) searchDomains(o Origin, list []string) {
	if len(list) > MaxSearch {
		c.fail(o, "%d search domains: resolv.conf readers use at most %d", len(list), MaxSearch)
	}
	if n := len(strings.Join(list, " ")); n > MaxSearchChars {
		c.fail(o, "the search list is %d characters long: resolv.conf readers use at most %d", n, MaxSearchChars)
	}
	seen := map[string]bool{}
	for i, s := range list {
		key := strings.ToLower(strings.TrimSuffix(s, "."))
		switch {
		case !items.IsDomainName(s):
			c.fail(o.index(i), "%q is not a domain name (labels of letters, digits and '-', at most %d bytes)", s, items.MaxDomainName)
		case seen[key]:
			c.fail(o.index(i), "%q is listed twice", s)
		}
		seen[key] = true
	}
}

// dns takes the dns section of the one file that has it; several files
// with one are reported on each.
func (m *merger) dns(files []namedIntent, out *Intent) {
	var claims []claim
	var from []*DNS
	for _, f := range files {
		if f.in.DNS != nil {
			claims = append(claims, claim{at: Origin{File: f.name, Path: "dns"}, keys: []string{"the dns section"}})
			from = append(from, f.in.DNS)
		}
	}
	for i, ok := range m.resolve(claims) {
		if ok {
			d := *from[i]
			d.Origin = claims[i].at
			out.DNS = &d
		}
	}
}

// withoutDNS leaves the dns section out of every file when several have
// one.
func (m *merger) withoutDNS(files []namedIntent, edit func(string) *Intent) {
	var claims []claim
	for _, f := range files {
		if f.in.DNS != nil {
			claims = append(claims, claim{at: Origin{File: f.name, Path: "dns"}, keys: []string{"the dns section"}})
		}
	}
	for i, ok := range m.resolve(claims) {
		if !ok {
			edit(claims[i].at.File).DNS = nil
		}
	}
}
