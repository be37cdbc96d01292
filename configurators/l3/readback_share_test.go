package l3

import (
	"fmt"
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
	got, err := readBack(e.k, dg.New("intended", kept, moved))
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

// The route cursor gives every route read back the intended route of its
// name, as looking it up does, whatever the order of the dump: the
// intended order, another, with routes missing, foreign or replaced.
func TestRouteCursorHint(t *testing.T) {
	route := func(i int, metric uint32) *items.Route {
		return &items.Route{Dst: pfx(fmt.Sprintf("10.0.%d.0/24", i)), Dev: "up0", Metric: metric}
	}
	intended := dg.New("intended")
	for i := range 30 {
		intended.Put(route(i, 0))
	}
	intended.Put(&items.Route{Dst: pfx("10.0.3.0/24"), Dev: "up1"}) // replaced
	intended.Delete(dg.Ref(route(4, 0)))
	h := hinter{intended}
	for name, order := range map[string][]int{
		"intended order": {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29},
		"reversed":       {29, 28, 27, 26, 3, 2, 1, 0},
		"gaps":           {0, 1, 12, 13, 14, 29, 5},
		"foreign":        {0, 100, 1, 101, 2},
	} {
		c := newRouteCursor(intended)
		for _, i := range order {
			for _, metric := range []uint32{0, 7} { // another metric: another route
				it := route(i, metric)
				want, _ := h.get(items.TypeRoute, it.Name()).(*items.Route)
				if got := c.hint(it, h); got != want {
					t.Errorf("%s: route %d metric %d: hint %v, want %v", name, i, metric, got, want)
				}
			}
		}
	}
	var none routeCursor
	if got := none.hint(route(1, 0), hinter{}); got != nil {
		t.Errorf("no intended graph: hint %v", got)
	}
}
