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

// A family without its iptables programs: plan predicts, for each of its
// chains, the error apply fails it with, and the other family's clashes
// are still found (the plan does not fail as a whole).
func TestChainClashesWithoutPrograms(t *testing.T) {
	c, fb := newFakeChains(t)
	c.backends[items.FamilyIPv6] = missingBackend{err: ErrNoTools}
	filter := newTableView()
	filter.addRule("NA-FWD", []string{"-j", "ACCEPT"})
	fb.tables["filter"] = filter
	v4 := &items.IptablesChain{Family: items.FamilyIPv4, Table: "filter", Chain: "NA-FWD"}
	v6 := &items.IptablesChain{Family: items.FamilyIPv6, Table: "filter", Chain: "NA-V6"}
	got, err := chainClashes(context.Background(), c, dg.New("intended", v4, v6))
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(got[dg.Ref(v4)], ErrNotOwned) {
		t.Errorf("ipv4 clash %v", got[dg.Ref(v4)])
	}
	want := c.Create(context.Background(), v6)
	if err := got[dg.Ref(v6)]; !errors.Is(err, ErrNoTools) || err.Error() != want.Error() {
		t.Errorf("ipv6 chain: predicted %v, create fails with %v", err, want)
	}
}

// The record of made chains shares the records' directory and is no
// chain record.
func TestMadeFileIsNoChainRecord(t *testing.T) {
	dir := t.TempDir()
	m := loadMade(dir, testNs)
	if err := m.add("ipv4/filter/NA-FWD"); err != nil {
		t.Fatal(err)
	}
	recs, err := loadRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs.recs) != 0 {
		t.Errorf("records %v, want none", recs.recs)
	}
}
