package firewall

import (
	"context"
	"errors"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// A chain of the intended name without the marker rule clashes, with the
// error the create then fails with; an empty foreign chain too; netagent's
// own chain, a chain of another table and a missing table do not. One
// iptables-save per family that the intent has chains of.
func TestChainClashes(t *testing.T) {
	c, fb := newFakeChains(t)
	filter := newTableView()
	filter.addRule("NA-FWD", []string{"-j", "ACCEPT"})
	filter.addChain("NA-EMPTY")
	filter.addRule("NA-OURS", markerRule)
	fb.tables["filter"] = filter
	chain := func(table, name string) *items.IptablesChain {
		return &items.IptablesChain{Family: items.FamilyIPv4, Table: table, Chain: name}
	}
	intended := dg.New("intended", chain("filter", "NA-FWD"), chain("filter", "NA-EMPTY"), chain("filter", "NA-OURS"),
		chain("filter", "NA-NEW"), chain("nat", "NA-FWD"), chain("mangle", "NA-X"))
	got, err := chainClashes(context.Background(), c, intended)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || fb.saves != 1 {
		t.Fatalf("clashes %v (%d saves)", got, fb.saves)
	}
	for _, name := range []string{"NA-FWD", "NA-EMPTY"} {
		ch := chain("filter", name)
		want := c.Create(context.Background(), ch)
		if err := got[dg.Ref(ch)]; !errors.Is(err, ErrNotOwned) || err.Error() != want.Error() {
			t.Errorf("%s: clash %v, create fails with %v", name, err, want)
		}
	}
}
