package graphwalk

import (
	"fmt"
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

func sysctl(key, value string) *items.Sysctl { return &items.Sysctl{Key: key, Value: value} }

// graphOf builds a graph with items by subgraph path ("" for the root).
func graphOf(bySub map[string][]dg.Item) *dg.Graph {
	g := dg.New("intended")
	for sub, its := range bySub {
		for _, it := range its {
			Into(g, sub).Put(it)
		}
	}
	return g
}

// layout lists "scope ref = item" for every item of g.
func layout(g *dg.Graph) []string {
	var out []string
	for _, ref := range g.Refs() {
		it, _ := g.Get(ref)
		scope, _ := g.ScopeOf(ref)
		out = append(out, fmt.Sprintf("%s %s = %v", scope, ref, it))
	}
	return out
}

// TestSyncGraph: after Sync, dst holds exactly src's items, each in
// src's subgraph (added, changed, moved, deleted, a subgraph gone), and an
// unchanged item is not a change of dst; also when src's journal no longer
// goes back to its start, or misses items put without one (graphwalk.Nodes falls
// back to the references).
func TestSyncGraph(t *testing.T) {
	for _, journal := range []string{"whole", "forgetful", "unjournaled"} {
		t.Run(journal, func(t *testing.T) {
			dst := graphOf(map[string][]dg.Item{
				"a.json": {sysctl("a.same", "1"), sysctl("a.changes", "1"), sysctl("a.moves", "1")},
				"b.json": {sysctl("b.goes", "1")},
				"":       {sysctl("root.goes", "1")},
			})
			src := dg.New("intended")
			if journal == "forgetful" {
				churn(t, src)
				churn(t, dst)
			}
			put := func() {
				for sub, its := range map[string][]dg.Item{
					"a.json": {sysctl("a.same", "1"), sysctl("a.changes", "2"), sysctl("a.new", "1")},
					"c.json": {sysctl("a.moves", "1")},
					"":       {sysctl("root.new", "1")},
				} {
					for _, it := range its {
						Into(src, sub).Put(it)
					}
				}
			}
			if journal == "unjournaled" { // the journal misses items: graphwalk.Nodes must see it
				src.Put(sysctl("a.new", "0"))
				src.WithoutJournal(put)
			} else {
				put()
			}
			rev := dst.Rev()
			Sync(dst, src)
			if got, want := layout(dst), layout(src); !slices.Equal(got, want) {
				t.Errorf("dst after Sync:\n%q\nwant\n%q", got, want)
			}
			if dst.SubGraph("b.json") != nil {
				t.Error("the subgraph b.json that src does not have is still there")
			}
			changed, _ := dst.ChangesSince(rev)
			if slices.Contains(changed, dg.Ref(sysctl("a.same", "1"))) {
				t.Errorf("an unchanged item is a change: %v", changed)
			}
			for _, ref := range []dg.ItemRef{dg.Ref(sysctl("a.changes", "")), dg.Ref(sysctl("a.moves", "")), dg.Ref(sysctl("b.goes", ""))} {
				if !slices.Contains(changed, ref) {
					t.Errorf("%s is not among the changes %v", ref, changed)
				}
			}
		})
	}
}

// churn puts and deletes enough items in g for its journal to forget its
// start, so that graphwalk.Nodes falls back to g's references.
func churn(t *testing.T, g *dg.Graph) {
	t.Helper()
	for i := range 3000 {
		g.Put(sysctl(fmt.Sprint("churn.", i), "1"))
	}
	for i := range 3000 {
		g.Delete(dg.Ref(sysctl(fmt.Sprint("churn.", i), "1")))
	}
	if _, ok := g.NodesChangedSince(0); ok {
		t.Fatal("the journal still goes back to the start: the fallback is not tested")
	}
}
