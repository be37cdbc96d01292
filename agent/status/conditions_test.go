package status

import (
	"testing"

	dg "github.com/netagent/netagent/depgraph"
)

// TestTallyFirstBadInAnyOrder: a document's first bad item is the least
// in ref order, whatever order EachItem, which does not sort, gives them in.
func TestTallyFirstBadInAnyOrder(t *testing.T) {
	refs := []dg.ItemRef{{Type: "route", Name: "b"}, {Type: "address", Name: "z"}, {Type: "route", Name: "a"}, {Type: "route", Name: "0"}}
	states := []string{StateBlocked, dg.StateFailed.String(), StateNotConverging, dg.StateCreated.String()}
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {2, 0, 3, 1}} {
		ts := Tallies{}
		for _, i := range order {
			ts.Add("a.json", refs[i], states[i], "why")
		}
		if got, want := ts["a.json"].firstBad, "address/z: why"; got != want {
			t.Errorf("order %v: first bad %q, want %q", order, got, want)
		}
	}
}
