package oneshot

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/versions"
	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/configurators/dhcp6"
	"github.com/netagent/netagent/configurators/dns"
	"github.com/netagent/netagent/configurators/firewall"
	"github.com/netagent/netagent/configurators/nftables"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/items/lease4"
)

// withoutLeaseItems leaves out of list the address and routes that the
// leases kept give (the routes on the lease's interface preferring its
// address as source; a DHCPv6 lease's /128): show lists them with the
// lease, and show --json says dhcp4 or ipv6.dhcp6 instead of a static
// address.
func withoutLeaseItems(list []dg.Item, kept map[string]*lease4.Lease, kept6 map[string]*dhcp6.Lease) []dg.Item {
	if len(kept) == 0 && len(kept6) == 0 {
		return list
	}
	return slices.DeleteFunc(list, func(it dg.Item) bool {
		switch it := it.(type) {
		case *items.Address:
			if l := kept6[it.Dev]; l != nil && it.Prefix == netip.PrefixFrom(l.Address, 128) {
				return true
			}
			l := kept[it.Dev]
			return l != nil && it.Prefix == l.Address
		case *items.Route:
			l := kept[it.Dev]
			return l != nil && it.Src == l.Address.Addr()
		}
		return false
	})
}

// withDHCP gives the interfaces with a kept lease their "dhcp4" section
// (dhcp4: see dhcp4Sections) or "ipv6": {"dhcp6": true}, adding the
// physical interface when the intent has no item for it.
func withDHCP(in *intent.Intent, dhcp4 map[string]*intent.DHCP4, kept6 map[string]*dhcp6.Lease) *intent.Intent {
	for _, name := range slices.Sorted(maps.Keys(dhcp4)) {
		render.InterfaceOf(in, name).DHCP4 = dhcp4[name]
	}
	for _, name := range slices.Sorted(maps.Keys(kept6)) {
		render.WithDHCP6(in, name)
	}
	return in
}

// dhcp4Sections returns the dhcp4 section of each interface with a kept
// lease. The options the client sends (hostname, clientId, vendorClass)
// and useRoutes and useDNS are nowhere in the kernel: they are taken from
// the current version of the intent (the state directory's), when it has
// a dhcp4 section for the interface. Else the section says only the
// metric of the lease's routes found in the kernel (metrics).
func dhcp4Sections(rt interface{ StateDir() string }, kept map[string]*lease4.Lease, metrics map[string]uint32) map[string]*intent.DHCP4 {
	if len(kept) == 0 {
		return nil
	}
	current := currentDHCP4(rt.StateDir())
	out := map[string]*intent.DHCP4{}
	for name := range kept {
		if d := current[name]; d != nil {
			out[name] = d
			continue
		}
		out[name] = &intent.DHCP4{RouteMetric: int64(metrics[name])}
	}
	return out
}

// currentDHCP4 returns the dhcp4 sections of the current version of the
// intent kept in stateDir, by interface; nil when there is none or it
// cannot be read.
func currentDHCP4(stateDir string) map[string]*intent.DHCP4 {
	st := versions.Open(stateDir, 0)
	defer st.Close()
	v, err := st.Current()
	if err != nil || v == nil {
		return nil
	}
	in, err := intent.Parse(v.Intent)
	if err != nil {
		return nil
	}
	out := map[string]*intent.DHCP4{}
	for i := range in.Interfaces {
		if d := in.Interfaces[i].DHCP4; d.Enabled() {
			out[in.Interfaces[i].Name] = d
		}
	}
	return out
}

// leaseMetrics returns the metric of the routes each kept lease gives
// that are in list (a route on the lease's interface preferring its
// address), by interface.
func leaseMetrics(list []dg.Item, kept map[string]*lease4.Lease) map[string]uint32 {
	out := map[string]uint32{}
	for _, it := range list {
		if r, ok := it.(*items.Route); ok {
			if l := kept[r.Dev]; l != nil && r.Src == l.Address.Addr() {
				out[r.Dev] = r.Metric
			}
		}
	}
	return out
}

// showDNS reads the DNS netagent wrote to path (configurators/dns), with
// the intent's own part (Global, which ToIntent makes the dns section):
// the servers and domains of the file that no kept lease gives. Nothing
// when the file is absent or not netagent's.
func showDNS(path string, kept map[string]*lease4.Lease, kept6 map[string]*dhcp6.Lease) []dg.Item {
	var out []dg.Item
	for _, it := range dns.ReadBack(dg.New("hint", &items.DNS{Path: path}), "") {
		d := *it.(*items.DNS)
		if d.Silent() {
			continue
		}
		leased := map[string]bool{}
		for _, l := range kept {
			for _, a := range l.DNS {
				leased[a.String()] = true
			}
			for _, s := range l.Domains {
				leased[strings.ToLower(strings.TrimSuffix(s, "."))] = true
			}
		}
		for _, l := range kept6 {
			ld := l.LinkDNS()
			for _, a := range ld.Nameservers {
				leased[a.String()] = true
			}
			for _, s := range ld.Search {
				leased[strings.ToLower(strings.TrimSuffix(s, "."))] = true
			}
		}
		d.Global = items.LinkDNS{}
		for _, a := range d.Nameservers {
			if !leased[a.String()] {
				d.Global.Nameservers = append(d.Global.Nameservers, a)
			}
		}
		for _, s := range d.Search {
			if !leased[strings.ToLower(strings.TrimSuffix(s, "."))] {
				d.Global.Search = append(d.Global.Search, s)
			}
		}
		out = append(out, &d)
	}
	return out
}

// showSections orders the text output: links first, then what sits on
// them.
var showSections = []struct{ typ, title string }{
	{items.TypeLink, "links (not netagent's)"},
	{items.TypeInterface, "interfaces"},
	{items.TypePort, "ports"},
	{items.TypeBridgeVLANs, "bridge vlans"},
	{items.TypeAddress, "addresses"},
	{items.TypeRoute, "routes"},
	{items.TypeRule, "rules"},
	{items.TypeNeighbor, "neighbors"},
	{items.TypeSysctl, "sysctls"},
	{items.TypeIptablesChain, "firewall chains"},
	{items.TypeNftTable, "nftables tables"},
	{items.TypeDNS, "dns"},
	{items.TypeForeign, "routes and rules (not netagent's, left alone)"},
}

// showKind is the section (an item type) of an item in show --all: a
// foreign object goes with netagent's objects of its kind.
func showKind(it dg.Item) string {
	switch it := it.(type) {
	case *items.Foreign:
		return it.Kind
	case *items.Link:
		return items.TypeInterface
	}
	return it.Type()
}

// allSections orders show --all: links (netagent's interfaces and the
// others') first, then what sits on them.
var allSections = []struct{ typ, title string }{
	{items.TypeInterface, "links"},
	{items.TypePort, "ports"},
	{items.TypeBridgeVLANs, "bridge vlans"},
	{items.TypeAddress, "addresses"},
	{items.TypeRoute, "routes"},
	{items.TypeRule, "rules"},
	{items.TypeNeighbor, "neighbors"},
	{items.TypeSysctl, "sysctls"},
	{items.TypeIptablesChain, "firewall chains"},
	{items.TypeNftTable, "nftables tables"},
}

// sectionOf is the index of it's section in allSections.
func sectionOf(it dg.Item) int {
	k := showKind(it)
	return slices.IndexFunc(allSections, func(s struct{ typ, title string }) bool { return s.typ == k })
}

// withoutManagedLinks leaves out of list the links that are an interface
// of netagent's too (a physical interface it configures reads back as
// both): show --all lists them once, as netagent's.
func withoutManagedLinks(list []dg.Item) []dg.Item {
	managed := map[string]bool{}
	for _, it := range list {
		if ifc, ok := it.(*items.Interface); ok {
			managed[ifc.IfName] = true
		}
	}
	return slices.DeleteFunc(list, func(it dg.Item) bool {
		l, ok := it.(*items.Link)
		return ok && managed[l.IfName]
	})
}

// carryingLinks are the names of the links (not netagent's) that
// netagent's objects of list depend on: a physical uplink with netagent's
// addresses and routes on it.
func carryingLinks(list []dg.Item) map[string]bool {
	out := map[string]bool{}
	for _, it := range list {
		if isForeign(it) {
			continue
		}
		for _, d := range it.Dependencies() {
			if t := d.RequiredItem.Type; t == items.TypeInterface || t == items.TypeLink {
				out[d.RequiredItem.Name] = true
			}
		}
	}
	return out
}

// isForeign reports whether it is someone else's object.
func isForeign(it dg.Item) bool {
	switch it.(type) {
	case *items.Foreign, *items.Link:
		return true
	}
	return false
}

// foreignLine is one foreign object's line in show --all.
func foreignLine(it dg.Item) string {
	if f, ok := it.(*items.Foreign); ok {
		return f.String() // "foreign <kind> <desc>"
	}
	return "foreign " + it.String()
}

// foreignChainLine is a foreign chain's line in show --all.
// foreignTableLine is show --all's line of another owner's nftables
// table (read by name only).
func foreignTableLine(t *nftables.ForeignTable) string {
	if t.MarkLost != nil {
		return fmt.Sprintf("foreign nft-table %s: made by netagent (%s) but its mark chain %s is gone: left alone",
			t.ID(), t.MarkLost.Format(time.RFC3339), items.NftOwnerChain)
	}
	return fmt.Sprintf("foreign nft-table %s (left alone)", t.ID())
}

func foreignChainLine(c *firewall.ForeignChain) string {
	if c.BuiltIn {
		return fmt.Sprintf("foreign rules in iptables-chain %s (built-in): %d rules not netagent's", c.Name(), len(c.Rules))
	}
	return fmt.Sprintf("foreign iptables-chain %s %d rules", c.Name(), len(c.Rules))
}

// ShowAll is show --all --json (format 1): the intent document show
// --json prints, and the objects that are not netagent's.
type ShowAll struct {
	Format  int             `json:"format"`
	Intent  *intent.Intent  `json:"intent"`
	Foreign []ForeignObject `json:"foreign"`
}

// ForeignObject is one object that is not netagent's.
type ForeignObject struct {
	// Kind is an item type: interface (a link), address, route, rule,
	// neighbor, iptables-chain.
	Kind string `json:"kind"`
	// Object describes it `ip` style (a link: its name; a chain:
	// family/table/chain).
	Object string `json:"object"`
	// Holds is the item (type/name) whose identity it has, when one can.
	Holds string `json:"holds,omitempty"`
	// MarkedNetagent: it carries netagent's mark, but no item can
	// describe it.
	MarkedNetagent bool `json:"markedNetagent,omitempty"`
	// CarriesNetagent (links): netagent's objects sit on it (a physical
	// uplink with netagent's addresses).
	CarriesNetagent bool `json:"carriesNetagent,omitempty"`
	// BuiltIn (chains): a built-in chain; Rules are then the rules in it
	// that are not netagent's jumps.
	BuiltIn bool       `json:"builtIn,omitempty"`
	Rules   [][]string `json:"rules,omitempty"`
	// MarkLost (nftables tables): when netagent made the table, as the
	// state directory records it; its mark chain is gone, so it is left
	// alone (see nftables.MarkLostError).
	MarkLost string `json:"markLost,omitempty"`
}

func showAllJSON(list []dg.Item, f *configurators.Foreign) *ShowAll {
	out := &ShowAll{Format: OutputFormat, Intent: render.ToIntent(list), Foreign: []ForeignObject{}}
	carriers := carryingLinks(list)
	all := slices.Concat(list, f.AddrNeigh)
	slices.SortStableFunc(all, func(a, b dg.Item) int { return sectionOf(a) - sectionOf(b) })
	for _, it := range all {
		switch it := it.(type) {
		case *items.Link:
			out.Foreign = append(out.Foreign, ForeignObject{Kind: items.TypeInterface, Object: it.IfName, CarriesNetagent: carriers[it.IfName]})
		case *items.Foreign:
			o := ForeignObject{Kind: it.Kind, Object: it.Desc, MarkedNetagent: it.Owned}
			if it.Holds != (dg.ItemRef{}) {
				o.Holds = it.Holds.String()
			}
			out.Foreign = append(out.Foreign, o)
		}
	}
	for _, c := range f.Chains {
		out.Foreign = append(out.Foreign, ForeignObject{Kind: items.TypeIptablesChain, Object: c.Name(),
			BuiltIn: c.BuiltIn, Rules: c.Rules})
	}
	for _, t := range f.Tables {
		o := ForeignObject{Kind: items.TypeNftTable, Object: t.ID()}
		if t.MarkLost != nil {
			o.MarkLost = t.MarkLost.Format(time.RFC3339)
		}
		out.Foreign = append(out.Foreign, o)
	}
	return out
}
