package items

import (
	"net/netip"
	"reflect"
	"testing"
	"unsafe"

	dg "github.com/netagent/netagent/depgraph"
)

// TestRouteDependenciesDoNotAllocate: the routes of a table differ only in
// their name, and share one dependency list: rendering or reading back 100k
// routes must not allocate 100k lists.
func TestRouteDependenciesDoNotAllocate(t *testing.T) {
	r := &Route{Dst: netip.MustParsePrefix("10.0.0.0/24"), Gw: netip.MustParseAddr("192.0.2.1"),
		Dev: "uplink0", CarrierLink: "uplink0", GwAddress: "uplink0 192.0.2.10/24"}
	want := r.buildDependencies()
	if got := r.Dependencies(); !reflect.DeepEqual(depRefs(got), depRefs(want)) {
		t.Fatalf("Dependencies %v, want %v", got, want)
	}
	other := *r
	other.Dst = netip.MustParsePrefix("10.0.1.0/24")
	if allocs := testing.AllocsPerRun(100, func() { other.Dependencies() }); allocs != 0 {
		t.Errorf("Dependencies allocates %v times per call", allocs)
	}
	// The shared list is full: a caller's append copies it.
	shared := r.Dependencies()
	_ = append(shared, requires(InterfaceRef("x"), ""))
	if got := r.Dependencies(); len(got) != len(want) {
		t.Errorf("an append changed the shared list: %v", got)
	}
	// A route with another device gets its own list.
	eth := &Route{Dst: r.Dst, Dev: "eth1"}
	if got := eth.Dependencies(); len(got) != 1 || got[0].RequiredItem != InterfaceRef("eth1") {
		t.Errorf("eth1 route's dependencies %v", got)
	}
}

// depRefs drops the predicate (funcs do not compare).
func depRefs(deps []dg.Dependency) []string {
	var out []string
	for _, d := range deps {
		out = append(out, d.RequiredItem.String()+" "+d.Description)
	}
	return out
}

// TestRouteSize: a Route is 192 bytes (its fields in an order without
// padding; it was 208), the size class a route costs in each graph.
func TestRouteSize(t *testing.T) {
	if n := unsafe.Sizeof(Route{}); n > 192 {
		t.Errorf("Route is %d bytes, want at most 192", n)
	}
}
