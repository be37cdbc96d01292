package l3

import (
	"net/netip"
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// TestPredictL3: a route or neighbour change is a replace (no window), a
// delete withdraws, for good or for a recreate; an address takes its
// subnet route along unless another address of the link covers it (a
// point-to-point one the route to its peer).
func TestPredictL3(t *testing.T) {
	addr := func(dev, p string) *items.Address {
		return &items.Address{Dev: dev, Prefix: netip.MustParsePrefix(p)}
	}
	route := &items.Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gw: netip.MustParseAddr("192.0.2.1"), Dev: "eth0"}
	neigh := &items.Neighbor{Dev: "eth0", IP: netip.MustParseAddr("192.0.2.9")}
	before := dg.New("current")
	before.Put(addr("v3", "10.3.0.1/24"))
	before.Put(addr("v3", "10.4.0.1/24"))
	before.Put(addr("v3", "10.4.0.2/24"))
	before.Put(addr("v4", "10.5.0.1/24"))
	cases := []struct {
		name     string
		op       reconciler.Operation
		recreate bool
		it       dg.Item
		effect   disrupt.Effect
		routes   []string
	}{
		{"route added", reconciler.OpCreate, false, route, disrupt.None, nil},
		{"route gateway changed", reconciler.OpModify, false, route, disrupt.Atomic, nil},
		{"route deleted", reconciler.OpDelete, false, route, disrupt.Removed, nil},
		{"route recreated", reconciler.OpDelete, true, route, disrupt.Withdrawn, nil},
		{"neighbour replaced", reconciler.OpModify, false, neigh, disrupt.Atomic, nil},
		{"address deleted", reconciler.OpDelete, false, addr("v4", "10.5.0.1/24"), disrupt.Removed, []string{"10.5.0.0/24 dev v4"}},
		{"address deleted, subnet kept by another", reconciler.OpDelete, false, addr("v3", "10.4.0.1/24"), disrupt.Removed, nil},
		{"host address deleted", reconciler.OpDelete, false, addr("v4", "10.6.0.1/32"), disrupt.Removed, nil},
		{"address recreated", reconciler.OpDelete, true, addr("v4", "10.5.0.1/24"), disrupt.Withdrawn, []string{"10.5.0.0/24 dev v4"}},
		{"point-to-point address deleted: its peer's route goes", reconciler.OpDelete, false,
			&items.Address{Dev: "v4", Prefix: netip.MustParsePrefix("10.9.0.1/32"), Peer: netip.MustParseAddr("10.9.0.2")}, disrupt.Removed, []string{"10.9.0.2/32 dev v4"}},
	}
	for _, c := range cases {
		p := Predict(c.op, c.recreate, c.it, before)
		if p.Effect != c.effect || !p.Certain || !slices.Equal(p.Routes, c.routes) {
			t.Errorf("%s: got %s (routes %v), want %s (routes %v)", c.name, p, p.Routes, c.effect, c.routes)
		}
	}
}
