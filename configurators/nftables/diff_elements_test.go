package nftables

import (
	"fmt"
	"slices"
	"testing"

	"github.com/netagent/netagent/items"
)

// TestDiffElements: the elements a kept set loses and gains, with the
// shared start and end of sets in ascending order skipped, and of sets
// in another order by their whole lists.
func TestDiffElements(t *testing.T) {
	for _, c := range []struct {
		have, want, del, add []string
	}{
		{[]string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}, []string{"10.0.0.1", "10.0.0.5", "10.0.0.9"}, []string{"10.0.0.2", "10.0.0.3"}, []string{"10.0.0.5", "10.0.0.9"}},
		{[]string{"10.0.0.2", "10.0.0.3"}, []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}, nil, []string{"10.0.0.1"}},
		{[]string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}, []string{"10.0.0.1", "10.0.0.2"}, []string{"10.0.0.3"}, nil},
		{[]string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}, []string{"10.0.0.1", "10.0.0.3"}, []string{"10.0.0.2"}, nil},
		{[]string{"10.0.0.1", "10.0.0.2"}, []string{"10.0.0.1", "10.0.0.2"}, nil, nil},
		{[]string{"10.0.0.3", "10.0.0.1"}, []string{"10.0.0.1", "10.0.0.4", "10.0.0.3"}, nil, []string{"10.0.0.4"}},
	} {
		d := &differ{}
		d.elements(items.NftSet{Name: "s", Type: "ipv4_addr", Elements: c.have}, items.NftSet{Name: "s", Type: "ipv4_addr", Elements: c.want})
		var del, add []string
		for _, op := range d.delElems {
			del = append(del, op.Set.Elements...)
		}
		for _, op := range d.addElems {
			add = append(add, op.Set.Elements...)
		}
		if !slices.Equal(del, c.del) || !slices.Equal(add, c.add) {
			t.Errorf("%v -> %v: deleted %v added %v, want %v and %v", c.have, c.want, del, add, c.del, c.add)
		}
	}
}

// TestDiffElementsShifted: a set of 10k whose first element moves to its
// end (the bench's one change) is one deletion and one addition.
func TestDiffElementsShifted(t *testing.T) {
	var have []string
	for i := range 10000 {
		have = append(have, fmt.Sprintf("10.0.%d.%d", i>>8, i&255))
	}
	want := append(slices.Clone(have[1:]), "11.0.0.0")
	d := &differ{}
	d.elements(items.NftSet{Name: "s", Type: "ipv4_addr", Elements: have}, items.NftSet{Name: "s", Type: "ipv4_addr", Elements: want})
	if len(d.delElems) != 1 || !slices.Equal(d.delElems[0].Set.Elements, []string{"10.0.0.0"}) ||
		len(d.addElems) != 1 || !slices.Equal(d.addElems[0].Set.Elements, []string{"11.0.0.0"}) {
		t.Errorf("deleted %v, added %v", d.delElems, d.addElems)
	}
}
