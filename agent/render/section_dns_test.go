package render

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/items/lease4"
)

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

// The resolver configuration merges the intent's servers and domains
// first, then the leases' in the intent's interface order (not the order
// the leases came in), without duplicates, at most three servers; a lease
// of an undeclared interface is left out.
func TestRenderDNSMerge(t *testing.T) {
	in := parse(t, `{"version": 1, "interfaces": [{"name": "up1", "type": "physical"}, {"name": "up0", "type": "physical"}],
		"dns": {"nameservers": ["192.0.2.53"], "search": ["corp.example"]}}`)
	facts := Facts{ResolvConf: "/run/netagent/resolv.conf", LeaseDNS: []items.LinkDNS{
		{Dev: "up0", Nameservers: addrs("198.51.100.1", "192.0.2.53"), Search: []string{"up0.example", "CORP.example."}},
		{Dev: "ghost0", Nameservers: addrs("203.0.113.99")},
		{Dev: "up1", Nameservers: addrs("2001:db8::53", "2001:db8::54"), Search: []string{"up1.example"}},
	}}
	g, err := RenderWith(in, facts)
	if err != nil {
		t.Fatal(err)
	}
	d := only[*items.DNS](t, g)
	if want := addrs("192.0.2.53", "2001:db8::53", "2001:db8::54"); !slices.Equal(d.Nameservers, want) {
		t.Errorf("nameservers %v, want %v", d.Nameservers, want)
	}
	if want := []string{"corp.example", "up1.example", "up0.example"}; !slices.Equal(d.Search, want) {
		t.Errorf("search %v, want %v", d.Search, want)
	}
	if len(d.Links) != 2 || d.Links[0].Dev != "up1" || d.Links[1].Dev != "up0" {
		t.Errorf("links %+v, want up1 then up0", d.Links)
	}
	if d.Path != facts.ResolvConf || len(d.Global.Nameservers) != 1 {
		t.Errorf("item %+v", d)
	}
	// ToIntent gives the intent's own part back.
	var list []dg.Item
	for it := range g.Items() {
		list = append(list, it)
	}
	back := ToIntent(list)
	if back.DNS == nil || !slices.Equal(back.DNS.Nameservers, []string{"192.0.2.53"}) || !slices.Equal(back.DNS.Search, []string{"corp.example"}) {
		t.Errorf("ToIntent dns %+v", back.DNS)
	}
}

// The search list keeps the first domains that fit in 6 domains and 256
// characters; a domain that does not fit is skipped, a later shorter one
// still taken.
func TestRenderDNSSearchLimits(t *testing.T) {
	long := strings.Repeat("a", 120) + ".example"
	facts := Facts{ResolvConf: "/r", LeaseDNS: []items.LinkDNS{{Dev: "up0", Search: []string{
		long, "x" + long, "b.example", "c.example", "d.example", "e.example", "f.example", "g.example"}}}}
	g, err := RenderWith(parse(t, `{"version": 1, "interfaces": [{"name": "up0", "type": "physical"}]}`), facts)
	if err != nil {
		t.Fatal(err)
	}
	d := only[*items.DNS](t, g)
	want := []string{long, "b.example", "c.example", "d.example", "e.example", "f.example"}
	if !slices.Equal(d.Search, want) {
		t.Errorf("search %v, want %v", d.Search, want)
	}
	if n := len(strings.Join(d.Search, " ")); n > intent.MaxSearchChars {
		t.Errorf("search line %d characters", n)
	}
}

// Without a resolv.conf path the agent does not handle DNS: no item; with
// one but nothing to say, a Silent item (no empty resolv.conf is written:
// the agent's file, holding servers gone since, is removed).
func TestRenderDNSOnlyWithATarget(t *testing.T) {
	in := parse(t, `{"version": 1, "dns": {"nameservers": ["192.0.2.53"]}}`)
	if g, err := RenderWith(parse(t, `{"version": 1}`), Facts{}); err != nil || g.Len() != 0 {
		t.Errorf("no path: %v items, %v", g.Len(), err)
	}
	g, err := RenderWith(parse(t, `{"version": 1}`), Facts{ResolvConf: "/r", LeaseDNS: []items.LinkDNS{{Dev: "up0", Nameservers: addrs("192.0.2.1")}}})
	if err != nil {
		t.Fatal(err)
	}
	if d := only[*items.DNS](t, g); !d.Silent() || d.Path != "/r" {
		t.Errorf("nothing to say: %v, want a Silent item for /r", d)
	}
	if g := mustRender(t, in); g.Len() != 0 {
		t.Errorf("no path: %d items", g.Len())
	}
}

// A DHCPv4 lease's servers and domains come before the DHCPv6 lease's of
// the same interface; an interface whose dhcp4 says useDNS false gives
// none.
func TestRenderDNSWithDHCP4Leases(t *testing.T) {
	in := parse(t, `{"version": 1, "interfaces": [{"name": "up0", "type": "physical", "dhcp4": true, "ipv6": {"dhcp6": true}},
		{"name": "up1", "type": "physical", "dhcp4": {"useDNS": false, "routeMetric": 200}}]}`)
	lease := func(dev, dns, domain string) *lease4.Lease {
		return &lease4.Lease{Interface: dev, Address: netip.MustParsePrefix("10.77.0.100/24"), DNS: addrs(dns), Domains: []string{domain}}
	}
	facts := Facts{ResolvConf: "/r",
		Leases:   map[string]*lease4.Lease{"up0": lease("up0", "10.77.0.53", "v4.example"), "up1": lease("up1", "10.88.0.53", "up1.example")},
		LeaseDNS: []items.LinkDNS{{Dev: "up0", Nameservers: addrs("2001:db8:77::53"), Search: []string{"v6.example"}}}}
	g, err := RenderWith(in, facts)
	if err != nil {
		t.Fatal(err)
	}
	d := only[*items.DNS](t, g)
	if want := addrs("10.77.0.53", "2001:db8:77::53"); !slices.Equal(d.Nameservers, want) {
		t.Errorf("nameservers %v, want %v", d.Nameservers, want)
	}
	if want := []string{"v4.example", "v6.example"}; !slices.Equal(d.Search, want) {
		t.Errorf("search %v, want %v", d.Search, want)
	}
}
