package render

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/items/lease4"
)

// The dns section: one items.DNS, rendered only when the agent hands DNS
// on (Facts.ResolvConf), merged from the intent and the leases.
var dnsSection = section{
	path:   "dns",
	render: (*builder).dns,
	toIntent: func(inv *inverter, out *intent.Intent) {
		for _, d := range sectionItems[*items.DNS](inv) {
			if !d.Global.Empty() {
				out.DNS = dnsToIntent(d.Global)
			}
		}
	},
}

// dns renders the resolver configuration: with Facts.ResolvConf set, one
// items.DNS (Silent when there is nothing to say) merging, in this order,
//
//  1. the intent's dns section (its nameservers, then its search);
//  2. the DNS of each lease, in the order of the intent's interfaces: an
//     interface's DHCPv4 lease (Facts.Leases; not with dhcp4 useDNS
//     false), then its DHCPv6 lease (Facts.LeaseDNS); a lease of an
//     interface the intent does not declare is left out;
//
// dropping a server or domain given before (domains compared without case
// and final dot), and keeping the first intent.MaxNameservers servers
// (glibc reads no more) and the first domains that fit in
// intent.MaxSearch domains and intent.MaxSearchChars characters.
func (b *builder) dns() {
	if b.facts.ResolvConf == "" {
		return
	}
	d := &items.DNS{Path: b.facts.ResolvConf, Links: b.leaseDNS()}
	at := intent.Origin{Path: "dns"}
	if in := b.in.DNS; in != nil {
		d.Global = intentDNS(in)
		at = in.Origin
		if at == (intent.Origin{}) {
			at.Path = "dns"
		}
	}
	m := dnsMerge{}
	for _, part := range append([]items.LinkDNS{d.Global}, d.Links...) {
		m.add(part)
	}
	d.Nameservers, d.Search = m.servers, m.search
	// With nothing to say the item is still put (items.DNS.Silent): the
	// servers of a dns section, or of a lease, gone since must leave the
	// file, also for a one-shot apply, which reads back only the items
	// intended.
	b.object("", at)
	b.put(d, at)
}

// leaseDNS returns the leases' DNS of the declared interfaces, in the
// intent's interface order: for each, its DHCPv4 lease's (unless its
// dhcp4 says useDNS false), then its DHCPv6 lease's. A lease whose
// address is refused (leaseclaims.go) gives no DNS either: its server
// tried to take over the intent's networks, and the uplink has no address
// to reach the servers by.
func (b *builder) leaseDNS() []items.LinkDNS {
	var out []items.LinkDNS
	for i := range b.in.Interfaces {
		ifc := &b.in.Interfaces[i]
		if l := b.facts.Leases[ifc.Name]; l != nil && ifc.DHCP4.Enabled() && ifc.DHCP4.EffectiveUseDNS() && b.idx.refused4[ifc.Name] == "" {
			if d := lease4DNS(l); !d.Empty() {
				out = append(out, d)
			}
		}
		for _, l := range b.facts.LeaseDNS {
			if l.Dev == ifc.Name && !l.Empty() && b.idx.refused6[ifc.Name] == "" {
				out = append(out, l)
			}
		}
	}
	return out
}

// lease4DNS is a DHCPv4 lease's DNS (options 6, and 119 or 15).
func lease4DNS(l *lease4.Lease) items.LinkDNS {
	return items.LinkDNS{Dev: l.Interface, Nameservers: slices.Clone(l.DNS), Search: slices.Clone(l.Domains)}
}

// intentDNS converts the intent's section (Validate checked it).
func intentDNS(in *intent.DNS) items.LinkDNS {
	var l items.LinkDNS
	for _, s := range in.Nameservers {
		a, _ := netip.ParseAddr(s)
		l.Nameservers = append(l.Nameservers, a)
	}
	l.Search = slices.Clone(in.Search)
	return l
}

// dnsToIntent is the inverse of intentDNS.
func dnsToIntent(l items.LinkDNS) *intent.DNS {
	out := &intent.DNS{Search: slices.Clone(l.Search)}
	for _, a := range l.Nameservers {
		out.Nameservers = append(out.Nameservers, a.String())
	}
	return out
}

// dnsMerge gathers servers and domains under the limits of resolv.conf.
type dnsMerge struct {
	servers []netip.Addr
	search  []string
	chars   int // of the search line: domains and the spaces between
}

func (m *dnsMerge) add(l items.LinkDNS) {
	for _, a := range l.Nameservers {
		if len(m.servers) < intent.MaxNameservers && !slices.Contains(m.servers, a) {
			m.servers = append(m.servers, a)
		}
	}
	for _, s := range l.Search {
		m.addDomain(s)
	}
}

func (m *dnsMerge) addDomain(s string) {
	same := func(o string) bool { return domainKey(o) == domainKey(s) }
	chars := m.chars + len(s)
	if len(m.search) > 0 {
		chars++ // the space before it
	}
	if len(m.search) == intent.MaxSearch || chars > intent.MaxSearchChars || slices.ContainsFunc(m.search, same) {
		return
	}
	m.search, m.chars = append(m.search, s), chars
}

// domainKey is a domain compared without case and final dot.
func domainKey(s string) string { return strings.ToLower(strings.TrimSuffix(s, ".")) }
