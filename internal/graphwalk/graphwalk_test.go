package graphwalk

import (
	"fmt"
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

func refsOf(nodes []*dg.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Ref().String())
	}
	slices.Sort(out)
	return out
}

// TestNodesEachItemOnce: every item once, from the journal (an item put
// twice, one deleted) or, once the journal forgot its start, from the
// references.
func TestNodesEachItemOnce(t *testing.T) {
	g := dg.New("g")
	for i := range 5 {
		g.Put(&items.Sysctl{Key: fmt.Sprint("k", i), Value: "1"})
	}
	g.Put(&items.Sysctl{Key: "k1", Value: "2"})
	g.Delete(dg.Ref(&items.Sysctl{Key: "k4"}))
	want := refsOf(g.Nodes())
	if got := refsOf(Nodes(g)); !slices.Equal(got, want) || len(got) != 4 {
		t.Errorf("from the journal: %v, want %v", got, want)
	}
	for i := range 3000 {
		g.Put(&items.Sysctl{Key: fmt.Sprint("churn", i), Value: "1"})
		g.Delete(dg.Ref(&items.Sysctl{Key: fmt.Sprint("churn", i)}))
	}
	if _, ok := g.NodesChangedSince(0); ok {
		t.Fatal("the journal still goes back to the start: the fallback is not tested")
	}
	if got := refsOf(Nodes(g)); !slices.Equal(got, want) {
		t.Errorf("from the references: %v, want %v", got, want)
	}
}
