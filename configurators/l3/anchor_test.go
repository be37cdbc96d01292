package l3

import (
	"net/netip"
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// A route read back depends on the addresses the kernel has: the intended
// (hinted) ones when they are there, else those holding its gateway and
// source now; the items given are never written (a route read back may be
// the intended item itself): a route anchored otherwise is a copy.
func TestAnchorRouteDeps(t *testing.T) {
	old := &items.Address{Dev: "uplink0", Prefix: netip.MustParsePrefix("192.0.2.10/24")}
	other := &items.Address{Dev: "lan0", Prefix: netip.MustParsePrefix("192.0.2.99/24")}
	newName := items.AddressName("uplink0", netip.MustParsePrefix("192.0.2.11/24"))
	hintDeps := []dg.ItemRef{items.InterfaceRef("uplink0"), {Type: items.TypeAddress, Name: newName}}
	moving := &items.Route{ // as read back with the hint of an intent that moved it to .11
		Dst: netip.MustParsePrefix("0.0.0.0/0"), Gw: netip.MustParseAddr("192.0.2.1"), Dev: "uplink0",
		Src: netip.MustParseAddr("192.0.2.10"), GwAddress: newName, Deps: hintDeps,
	}
	kept := &items.Route{
		Dst: netip.MustParsePrefix("198.51.100.0/24"), Gw: netip.MustParseAddr("192.0.2.1"), Dev: "uplink0",
		GwAddress: old.Name(),
	}
	orphan := &items.Route{ // its gateway is on-link through no address of ours
		Dst: netip.MustParsePrefix("203.0.113.0/24"), Gw: netip.MustParseAddr("10.0.0.1"), Dev: "uplink0",
		GwAddress: "uplink0/10.0.0.2/24",
	}
	given := *moving
	out := []dg.Item{other, moving, old, kept, orphan}
	anchorRouteDeps(out)
	if !moving.Equal(&given) || moving.GwAddress != newName {
		t.Errorf("the route given was written: %+v", moving)
	}
	if out[3] != kept {
		t.Error("a route anchored as it was is a copy")
	}
	moving, orphan = out[1].(*items.Route), out[4].(*items.Route)

	if moving.GwAddress != old.Name() {
		t.Errorf("GwAddress %q, want the address the kernel has on the route's device, %q", moving.GwAddress, old.Name())
	}
	if want := []dg.ItemRef{items.InterfaceRef("uplink0"), items.AddressRef("uplink0", old.Prefix)}; !slices.Equal(moving.Deps, want) {
		t.Errorf("Deps %v, want %v", moving.Deps, want)
	}
	if hintDeps[1].Name != newName {
		t.Error("the hint's Deps were written")
	}
	if kept.GwAddress != old.Name() {
		t.Errorf("a route whose address is there moved to %q", kept.GwAddress)
	}
	if orphan.GwAddress != "" {
		t.Errorf("GwAddress %q for a gateway no address of ours holds", orphan.GwAddress)
	}
}
