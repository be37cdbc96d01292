package dhcp

import (
	"net/netip"
	"reflect"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

func testLease() *Lease {
	return &Lease{Interface: "up0", Address: netip.MustParsePrefix("192.0.2.10/24"),
		Server: netip.MustParseAddr("192.0.2.1"), Router: netip.MustParseAddr("192.0.2.1")}
}

// The lease's address (its prefix route at the lease's metric), the host
// route to the router and the default route depend on the lease item; the
// default route's gateway waits for the leased address (its subnet holds
// it), the host route for the address as its source, and, on a physical
// uplink, both for the carrier.
func TestLeaseItemsDefaultRoute(t *testing.T) {
	l := testLease()
	got := LeaseItems(l, RouteOptions{UseRoutes: true, Metric: 100, Physical: true})
	lease := []dg.ItemRef{items.DHCP4LeaseRef("up0")}
	want := []dg.Item{
		&items.Address{Dev: "up0", Prefix: l.Address, Deps: lease, RouteMetric: 100},
		&items.Route{Dst: netip.MustParsePrefix("192.0.2.1/32"), Dev: "up0", Metric: 100, Scope: items.ScopeLink,
			Src: l.Address.Addr(), CarrierLink: "up0", Deps: append(lease, items.AddressRef("up0", l.Address))},
		&items.Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gw: l.Router, Dev: "up0", Metric: 100,
			Src: l.Address.Addr(), CarrierLink: "up0", GwAddress: "up0/192.0.2.10/24", Deps: lease},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("items\n got %v\nwant %v", got, want)
	}
	for _, it := range got {
		if !dependsOn(it, items.DHCP4LeaseRef("up0")) {
			t.Errorf("%v does not depend on the lease", it)
		}
	}
}

// With option 121 the router of option 3 is not used (RFC 3442); an
// on-link route has no gateway, a gateway outside the subnet is on-link;
// each gateway has its host route before its route (lease4.Items).
func TestLeaseItemsClassless(t *testing.T) {
	l := testLease()
	l.Routes = []Route{
		{Dst: netip.MustParsePrefix("198.51.100.0/24"), Via: netip.MustParseAddr("192.0.2.254")},
		{Dst: netip.MustParsePrefix("203.0.113.0/25")},
		{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: netip.MustParseAddr("10.9.9.9")},
	}
	got := LeaseItems(l, RouteOptions{UseRoutes: true})
	if len(got) != 6 {
		t.Fatalf("items %v, want the address, 3 routes and 2 gateways' host routes", got)
	}
	r1, r2, r3 := got[2].(*items.Route), got[3].(*items.Route), got[5].(*items.Route)
	for i, gw := range map[int]string{1: "192.0.2.254/32", 4: "10.9.9.9/32"} {
		if h := got[i].(*items.Route); h.Dst.String() != gw || h.Scope != items.ScopeLink || h.Gw.IsValid() {
			t.Errorf("item %d %v, want the host route to %s", i, h, gw)
		}
	}
	if r1.Gw != l.Routes[0].Via || r1.OnLink {
		t.Errorf("route 1 %v", r1)
	}
	if r2.Gw.IsValid() || r2.Scope != items.ScopeLink {
		t.Errorf("route 2 %v, want on-link scope link", r2)
	}
	if r3.Gw != l.Routes[2].Via || !r3.OnLink || r3.Dst.Bits() != 0 {
		t.Errorf("route 3 %v, want the default route on-link", r3)
	}
	for _, it := range got {
		if r, ok := it.(*items.Route); ok && r.Gw == l.Router {
			t.Errorf("option 3's router used beside option 121: %v", r)
		}
	}
}

// useRoutes false: the address only; no router: no route.
func TestLeaseItemsWithoutRoutes(t *testing.T) {
	if got := LeaseItems(testLease(), RouteOptions{}); len(got) != 1 {
		t.Errorf("useRoutes false: %v", got)
	}
	l := testLease()
	l.Router = netip.Addr{}
	if got := LeaseItems(l, RouteOptions{UseRoutes: true}); len(got) != 1 {
		t.Errorf("no router: %v", got)
	}
}

func dependsOn(it dg.Item, ref dg.ItemRef) bool {
	for _, d := range it.Dependencies() {
		if d.RequiredItem == ref {
			return true
		}
	}
	return false
}
