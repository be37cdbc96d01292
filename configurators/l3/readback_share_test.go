package l3

import (
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// A route that reads back Equal to its intended item is that item (the
// current state shares it); one the kernel holds otherwise is an item of
// its own with the kernel's values; the intended items are never written.
func TestReadBackSharesIntendedRoutes(t *testing.T) {
	e := newFakeEnv(t)
	kept := &items.Route{Dst: pfx("203.0.113.0/24"), Dev: "up0", Scope: items.ScopeLink}
	moved := &items.Route{Dst: pfx("198.51.100.0/24"), Dev: "up0", Scope: items.ScopeLink, Metric: 10}
	for _, r := range []*items.Route{kept, moved} {
		if errs := e.route.ApplyBatch(ctx, []reconciler.BatchOp{{Op: reconciler.OpCreate, New: r}}); errs[0] != nil {
			t.Fatal(errs[0])
		}
	}
	// someone moves the second route to up1, in place
	want := *moved
	want.Dev = "up1"
	if errs := e.route.ApplyBatch(ctx, []reconciler.BatchOp{{Op: reconciler.OpModify, Old: moved, New: &want}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	keptCopy, movedCopy := *kept, *moved
	got, err := readBack(e.k, e.k, dg.New("intended", kept, moved))
	must(t, err)
	found := map[dg.ItemRef]dg.Item{}
	for _, it := range got {
		found[dg.Ref(it)] = it
	}
	if found[dg.Ref(kept)] != dg.Item(kept) {
		t.Errorf("the route read back as intended is %v, not the intended item", found[dg.Ref(kept)])
	}
	r, _ := found[dg.Ref(moved)].(*items.Route)
	if r == nil || r == moved || r.Dev != "up1" {
		t.Errorf("the moved route read back as %v, want its own item on up1", r)
	}
	if !kept.Equal(&keptCopy) || !moved.Equal(&movedCopy) || moved.Dev != "up0" {
		t.Error("read-back wrote an intended item")
	}
}
