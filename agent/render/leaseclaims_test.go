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

// claimsIntent: the DHCP uplink up0 (both families) beside the static
// lan0 and the protected mgmt0, a blackhole, a route through lan0's
// gateway, and a route through a gateway only up0's lease can hold.
const claimsIntent = `{"version": 1,
 "interfaces": [
  {"name": "up0", "type": "physical", "dhcp4": {"routeMetric": 100}, "ipv6": {"dhcp6": true}},
  {"name": "lan0", "type": "physical", "addresses": ["192.168.50.1/24", "2001:db8:50::1/64"]},
  {"name": "mgmt0", "type": "physical", "protected": true, "addresses": ["10.99.0.1/24"]}],
 "routes": [
  {"to": "203.0.113.0/24", "type": "blackhole"},
  {"to": "172.16.0.0/12", "via": "192.168.50.254"},
  {"to": "198.51.100.0/24", "via": "10.77.0.1"}]}`

func claimsLease(addr, router string, routes ...lease4.Route) *lease4.Lease {
	l := &lease4.Lease{Interface: "up0", Address: netip.MustParsePrefix(addr), Server: netip.MustParseAddr("10.77.0.1"), Routes: routes}
	if router != "" {
		l.Router = netip.MustParseAddr(router)
	}
	return l
}

func via(dst, gw string) lease4.Route {
	return lease4.Route{Dst: netip.MustParsePrefix(dst), Via: netip.MustParseAddr(gw)}
}

// upItems returns the addresses and routes on up0 in g.
func upItems(g *dg.Graph) (addrs, routes []string) {
	for it := range g.Items() {
		switch v := it.(type) {
		case *items.Address:
			if v.Dev == "up0" {
				addrs = append(addrs, v.Prefix.String())
			}
		case *items.Route:
			if v.Dev == "up0" {
				routes = append(routes, v.Dst.String())
			}
		}
	}
	return addrs, routes
}

// TestRenderLeaseClaims: a lease never takes over what the intent puts
// on its other links. A leased address that lan0 holds, or whose subnet
// overlaps lan0's or sits inside a route the intent sends through lan0,
// is refused with all of the lease; a lease route equal to or inside
// mgmt0's subnet (protected), the blackhole or the route through lan0, or
// through a gateway on lan0's or mgmt0's subnet, is left out; a less
// specific one (10.0.0.0/8 around mgmt0's /24) is kept, as longest-prefix
// routing leaves mgmt0's subnet on mgmt0. The lease item says why.
func TestRenderLeaseClaims(t *testing.T) {
	for _, tc := range []struct {
		name       string
		lease      *lease4.Lease
		addrs      []string // on up0
		routes     []string // on up0
		refused    []string // in the lease item's Refused
		routeWaits bool     // the route via 10.77.0.1 still waits for the lease
	}{
		{name: "address of lan0", lease: claimsLease("192.168.50.1/24", "192.168.50.254"),
			refused: []string{"leased address 192.168.50.1/24 is lan0's address 192.168.50.1/24"}, routeWaits: true},
		{name: "subnet around lan0's", lease: claimsLease("192.168.7.5/16", "192.168.7.1"),
			refused: []string{"leased address 192.168.7.5/16 overlaps lan0's address 192.168.50.1/24"}, routeWaits: true},
		{name: "subnet inside mgmt0's", lease: claimsLease("10.99.0.200/28", "10.99.0.193"),
			refused: []string{"overlaps mgmt0's address 10.99.0.1/24"}, routeWaits: true},
		{name: "subnet inside a route through lan0", lease: claimsLease("172.16.1.5/24", "172.16.1.1"),
			refused: []string{"leased subnet 172.16.1.0/24 would take traffic from the intent's route to 172.16.0.0/12 via 192.168.50.254 on lan0"}, routeWaits: true},
		{name: "plain lease", lease: claimsLease("10.77.0.100/24", "10.77.0.1"),
			addrs: []string{"10.77.0.100/24"}, routes: []string{"0.0.0.0/0", "10.77.0.1/32"}},
		{name: "option 121", lease: claimsLease("10.77.0.100/24", "10.77.0.1",
			via("10.99.0.0/24", "10.77.0.1"), via("10.99.0.128/25", "10.77.0.1"), via("10.0.0.0/8", "10.77.0.1"),
			via("203.0.113.0/25", "10.77.0.1"), via("172.16.5.0/24", "10.77.0.1"), via("0.0.0.0/0", "192.168.50.254")),
			addrs:  []string{"10.77.0.100/24"},
			routes: []string{"10.0.0.0/8", "10.77.0.1/32"}, // and the host route to the gateway kept
			refused: []string{
				"lease route to 10.99.0.0/24 would take traffic from mgmt0's address 10.99.0.1/24",
				"lease route to 10.99.0.128/25 would take traffic from mgmt0's address 10.99.0.1/24",
				"lease route to 203.0.113.0/25 would take traffic from the intent's blackhole route to 203.0.113.0/24",
				"lease route to 172.16.5.0/24 would take traffic from the intent's route to 172.16.0.0/12 via 192.168.50.254 on lan0",
				"lease route to 0.0.0.0/0: gateway 192.168.50.254 is on lan0's address 192.168.50.1/24"}},
		{name: "router on mgmt0", lease: claimsLease("10.77.0.100/24", "10.99.0.5"),
			addrs: []string{"10.77.0.100/24"}, routes: nil,
			refused: []string{"lease route to 0.0.0.0/0: gateway 10.99.0.5 is on mgmt0's address 10.99.0.1/24"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := RenderWith(parse(t, claimsIntent), Facts{Leases: map[string]*lease4.Lease{"up0": tc.lease}})
			if err != nil {
				t.Fatal(err)
			}
			addrs, routes := upItems(g)
			if strings.Join(addrs, " ") != strings.Join(tc.addrs, " ") {
				t.Errorf("addresses on up0 %v, want %v", addrs, tc.addrs)
			}
			slices.Sort(routes)
			if got, want := strings.Join(routes, " "), strings.Join(tc.routes, " "); got != want {
				t.Errorf("routes on up0 [%s], want [%s]", got, want)
			}
			it, _ := g.Get(items.DHCP4LeaseRef("up0"))
			refused := it.(*items.DHCP4Lease).Refused
			for _, want := range tc.refused {
				if !strings.Contains(refused, want) {
					t.Errorf("Refused %q, want it to say %q", refused, want)
				}
			}
			if len(tc.refused) == 0 && refused != "" {
				t.Errorf("Refused %q, want nothing refused", refused)
			}
			waits := false
			for it := range g.Items() {
				if r, ok := it.(*items.Route); ok && r.Dst.String() == "198.51.100.0/24" {
					for _, d := range r.Deps {
						waits = waits || d == items.DHCP4AddressRef("up0")
					}
				}
			}
			if waits != tc.routeWaits {
				t.Errorf("the route through the lease's gateway waits for the lease: %v, want %v", waits, tc.routeWaits)
			}
		})
	}
}

// TestRenderLeaseClaimsDefaultRoute: the intent's own default route (via
// lan0) wins over the lease's, which would take its traffic (same prefix,
// whatever the metric), and over a lease route more specific than it
// (0.0.0.0/1); the leased subnet itself, inside every default route, is
// kept: a default route is no claim on the uplink's own network.
func TestRenderLeaseClaimsDefaultRoute(t *testing.T) {
	in := parse(t, `{"version": 1,
	 "interfaces": [
	  {"name": "up0", "type": "physical", "dhcp4": {"routeMetric": 50}},
	  {"name": "lan0", "type": "physical", "addresses": ["192.168.50.1/24"]}],
	 "routes": [{"to": "default", "via": "192.168.50.254", "metric": 100}]}`)
	for _, l := range []*lease4.Lease{claimsLease("10.77.0.100/24", "10.77.0.1"),
		claimsLease("10.77.0.100/24", "10.77.0.1", via("0.0.0.0/1", "10.77.0.1"), via("0.0.0.0/0", "10.77.0.1"))} {
		g, err := RenderWith(in, Facts{Leases: map[string]*lease4.Lease{"up0": l}})
		if err != nil {
			t.Fatal(err)
		}
		addrs, routes := upItems(g)
		if len(addrs) != 1 || len(routes) != 0 {
			t.Errorf("lease %v: addresses %v and routes %v on up0, want the address alone", l.Routes, addrs, routes)
		}
		it, _ := g.Get(items.DHCP4LeaseRef("up0"))
		if r := it.(*items.DHCP4Lease).Refused; !strings.Contains(r, "lease route to 0.0.0.0/0 would take traffic from the intent's route to 0.0.0.0/0 via 192.168.50.254 on lan0") {
			t.Errorf("Refused %q", r)
		}
	}
}

// TestRenderLeaseClaimsDHCP6: a DHCPv6 address that lan0 holds, or inside
// lan0's subnet, is refused (not rendered, the lease item says why); one
// outside every subnet of the intent is rendered.
func TestRenderLeaseClaimsDHCP6(t *testing.T) {
	for addr, want := range map[string]string{
		"2001:db8:50::1": "leased address 2001:db8:50::1/128 is lan0's address 2001:db8:50::1/64",
		"2001:db8:50::9": "leased address 2001:db8:50::9/128 overlaps lan0's address 2001:db8:50::1/64",
		"2001:db8:77::9": "",
	} {
		a := netip.MustParseAddr(addr)
		g, err := RenderWith(parse(t, claimsIntent), Facts{DHCP6: map[string]Lease6{"up0": {Address: a}}})
		if err != nil {
			t.Fatal(err)
		}
		it, _ := g.Get(items.DHCP6LeaseRef("up0"))
		if r := it.(*items.DHCP6Lease).Refused; r != want {
			t.Errorf("%s: Refused %q, want %q", addr, r, want)
		}
		addrs, _ := upItems(g)
		if rendered := len(addrs) == 1; rendered != (want == "") {
			t.Errorf("%s: addresses on up0 %v (refused: %q)", addr, addrs, want)
		}
	}
}

// TestLeaseRefusedEqual: Refused is no kernel attribute: a lease item
// that differs only by it is Equal (no modification, no exchange).
func TestLeaseRefusedEqual(t *testing.T) {
	if a, b := (&items.DHCP4Lease{Dev: "up0"}), (&items.DHCP4Lease{Dev: "up0", Refused: "x"}); !a.Equal(b) {
		t.Error("DHCP4Lease: Refused makes the items differ")
	}
	if a, b := (&items.DHCP6Lease{Dev: "up0"}), (&items.DHCP6Lease{Dev: "up0", Refused: "x"}); !a.Equal(b) {
		t.Error("DHCP6Lease: Refused makes the items differ")
	}
}

// TestRenderRouteEditLeaseClaims: with a lease known, an edit adding a
// route of table main (a claim that refuses a lease route) is left to a
// full render, which refuses the lease's route into it; one in another
// table is no claim and is rendered on its own.
func TestRenderRouteEditLeaseClaims(t *testing.T) {
	doc := func(extra string) *intent.Intent {
		return parse(t, `{"version": 1, "interfaces": [
		  {"name": "up0", "type": "physical", "dhcp4": true},
		  {"name": "lan0", "type": "physical", "addresses": ["192.168.50.1/24"]}],
		 "routes": [{"to": "192.0.2.0/24", "via": "192.168.50.254"}`+extra+`]}`)
	}
	facts := Facts{Leases: map[string]*lease4.Lease{"up0": claimsLease("10.77.0.100/24", "10.77.0.1", via("198.51.100.0/25", "10.77.0.1"))}}
	base := doc("")
	g, err := RenderFilesWith(map[string]*intent.Intent{"a.json": base}, facts)
	if err != nil {
		t.Fatal(err)
	}
	claimed := doc(`, {"to": "198.51.100.0/24", "type": "blackhole"}`)
	if edit, ok := RenderRouteEdit(map[string]*intent.Intent{"a.json": claimed}, "a.json", base, facts, g.Contains); ok {
		t.Errorf("a claim in table main rendered on its own: %+v", edit)
	}
	full, err := RenderFilesWith(map[string]*intent.Intent{"a.json": claimed}, facts)
	if err != nil {
		t.Fatal(err)
	}
	if _, routes := upItems(full); slices.Contains(routes, "198.51.100.0/25") {
		t.Errorf("the lease route into the blackhole stayed: %v", routes)
	}
	other := doc(`, {"to": "198.51.100.0/24", "type": "blackhole", "table": 100}`)
	if _, ok := RenderRouteEdit(map[string]*intent.Intent{"a.json": other}, "a.json", base, facts, g.Contains); !ok {
		t.Error("a route of table 100 (no claim) was not rendered on its own")
	}
}

// TestRenderLeaseClaimsNoDNS: a lease whose address is refused gives no
// DNS to resolv.conf either (DHCPv4 and DHCPv6); a lease of which only a
// route is refused keeps its DNS.
func TestRenderLeaseClaimsNoDNS(t *testing.T) {
	v4 := claimsLease("192.168.50.1/24", "192.168.50.254")
	v4.DNS = []netip.Addr{netip.MustParseAddr("6.6.6.6")}
	facts := Facts{ResolvConf: "/r", Leases: map[string]*lease4.Lease{"up0": v4},
		DHCP6:    map[string]Lease6{"up0": {Address: netip.MustParseAddr("2001:db8:50::9")}},
		LeaseDNS: []items.LinkDNS{{Dev: "up0", Nameservers: []netip.Addr{netip.MustParseAddr("2001:db8::666")}}}}
	g, err := RenderWith(parse(t, claimsIntent), facts)
	if err != nil {
		t.Fatal(err)
	}
	if d := only[*items.DNS](t, g); !d.Silent() {
		t.Errorf("refused leases gave DNS: %v", d)
	}
	facts.Leases["up0"] = claimsLease("10.77.0.100/24", "10.99.0.5") // only the default route refused
	facts.Leases["up0"].DNS = []netip.Addr{netip.MustParseAddr("10.77.0.53")}
	if g, err = RenderWith(parse(t, claimsIntent), facts); err != nil {
		t.Fatal(err)
	}
	if d := only[*items.DNS](t, g); len(d.Nameservers) != 1 || d.Nameservers[0].String() != "10.77.0.53" {
		t.Errorf("DNS %v, want the DHCPv4 lease's server alone", d)
	}
}
