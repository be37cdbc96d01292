package reconciler

import (
	"fmt"
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
)

// groupByType puts the proposals of one type together, types in order of
// first appearance, each type's proposals in their order, and says where
// each type's run ends.
func TestGroupByTypeIsStable(t *testing.T) {
	g := dg.New("g")
	var group []proposal
	for i, typ := range []string{"b", "a", "b", "c", "a", "b", "c"} {
		group = append(group, proposal{node: g.NodeFor(dg.ItemRef{Type: typ, Name: fmt.Sprint(i)})})
	}
	u := &run{}
	for range 2 { // the second time over scratch space in use before
		in := slices.Clone(group)
		ends := u.groupByType(in)
		var got []string
		for _, p := range in {
			got = append(got, p.ref().String())
		}
		want := []string{"b/0", "b/2", "b/5", "a/1", "a/4", "c/3", "c/6"}
		if !slices.Equal(got, want) || !slices.Equal(ends, []int{3, 5, 7}) {
			t.Fatalf("grouped %v ends %v, want %v ends [3 5 7]", got, ends, want)
		}
	}
	if ends := u.groupByType(group[:1]); !slices.Equal(ends, []int{1}) {
		t.Fatalf("one proposal: ends %v", ends)
	}
	if ends := u.groupByType(nil); len(ends) != 0 {
		t.Fatalf("no proposal: ends %v", ends)
	}
}
