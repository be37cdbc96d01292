package host

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// eachPairUnordered and eachPairListed yield every ref of either graph
// exactly once, paired as eachPair pairs them, whatever the graphs went
// through: an item replaced or deleted (the journal then lists a node
// twice, or a dead one), items only in the second graph, a list of the
// second graph's nodes that is not all of them (a repeat), or none.
func TestEachPairUnordered(t *testing.T) {
	route := func(i int, dev string) *items.Route {
		return &items.Route{Dst: netip.MustParsePrefix(fmt.Sprintf("10.0.%d.0/24", i)), Dev: dev}
	}
	a := dg.New("a")
	for i := range 6 {
		a.Put(route(i, "eth0"))
	}
	a.Put(route(2, "eth1")) // replaced: the journal holds route 2 twice
	a.Delete(dg.Ref(route(5, "")))
	b := dg.New("b")
	var listed []*dg.Node
	for i := 1; i < 9; i++ {
		b.Put(route(i, "eth0"))
		listed = append(listed, b.Node(dg.Ref(route(i, ""))))
	}
	want := pairsOf(eachPair(a, b))
	if len(want) != 9 { // routes 0 to 8
		t.Fatalf("eachPair: %d pairs: %v", len(want), want)
	}
	for name, seq := range map[string]func() []string{
		"unordered":      func() []string { return pairsOf(eachPairUnordered(a, b)) },
		"listed":         func() []string { return pairsOf(eachPairListed(a, b, listed)) },
		"listed, repeat": func() []string { return pairsOf(eachPairListed(a, b, append(listed[:7:7], listed[0]))) },
		"listed, short":  func() []string { return pairsOf(eachPairListed(a, b, listed[:3])) },
		"fresh graph":    func() []string { return pairsOf(eachPairUnordered(b, a)) },
	} {
		got := seq()
		slices.Sort(got)
		w := want
		if name == "fresh graph" {
			w = pairsOf(eachPair(b, a))
		}
		w = slices.Sorted(slices.Values(w))
		if !slices.Equal(got, w) {
			t.Errorf("%s:\n got %v\nwant %v", name, got, w)
		}
	}
	if got := pairsOf(eachPairUnordered(a, nil)); len(got) != 5 {
		t.Errorf("no second graph: %v", got)
	}
}

// pairsOf lists the pairs of seq as "ref: in a, in b".
func pairsOf(seq func(func(*dg.Node, *dg.Node) bool)) []string {
	var out []string
	for x, y := range seq {
		desc := func(n *dg.Node) string {
			if n == nil {
				return "-"
			}
			return n.Item().String()
		}
		out = append(out, fmt.Sprintf("%s: %s | %s", refOf(x, y), desc(x), desc(y)))
	}
	return out
}
