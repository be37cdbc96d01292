package firewall

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// newFakeDualChains is newFakeChains with an ip6tables fake too.
func newFakeDualChains(t *testing.T) (*chainConfigurator, map[items.Family]*FakeIPTables) {
	t.Helper()
	c, v4 := newFakeChains(t)
	v6 := NewFakeIPTables()
	c.backends[items.FamilyIPv6] = v6
	return c, map[items.Family]*FakeIPTables{items.FamilyIPv4: v4, items.FamilyIPv6: v6}
}

// renderChains renders an intent document's firewall section into the
// intended chains.
func renderChains(t *testing.T, chains string) *dg.Graph {
	t.Helper()
	g, err := render.Load(map[string][]byte{"fw.json": []byte(`{"version": 1, "firewall": {"chains": [` + chains + `]}}`)})
	if err != nil {
		t.Fatalf("rendering %s: %v", chains, err)
	}
	return g
}

// syncChains is one apply of the one-shot kind, with the engine's diff
// left out: read the chains back with the intended graph as hint, and hand
// every difference to ApplyBatch in one batch. It returns the operations
// run.
func syncChains(t *testing.T, c *chainConfigurator, intended *dg.Graph) []reconciler.BatchOp {
	t.Helper()
	ctx := context.Background()
	current, err := readBackChains(ctx, c.backends, c.records, c.made, intended)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]dg.Item{}
	for _, it := range current {
		byName[it.Name()] = it
	}
	var ops []reconciler.BatchOp
	for it := range intended.Items() {
		switch old, ok := byName[it.Name()]; {
		case !ok:
			ops = append(ops, reconciler.BatchOp{Op: reconciler.OpCreate, New: it})
		case !old.Equal(it):
			ops = append(ops, reconciler.BatchOp{Op: reconciler.OpModify, Old: old, New: it})
		}
		delete(byName, it.Name())
	}
	for _, old := range byName {
		ops = append(ops, reconciler.BatchOp{Op: reconciler.OpDelete, Old: old})
	}
	for i, err := range c.ApplyBatch(ctx, ops) {
		if err != nil {
			t.Errorf("%v %v: %v", ops[i].Op, ops[i].New, err)
		}
	}
	return ops
}

// applyTwice checks that one apply converges (a read-back right after it
// equals the intent) and that the next writes nothing.
func applyTwice(t *testing.T, c *chainConfigurator, fakes map[items.Family]*FakeIPTables, intended *dg.Graph) {
	t.Helper()
	syncChains(t, c, intended)
	restores := 0
	for _, fb := range fakes {
		restores += len(fb.restores)
	}
	if ops := syncChains(t, c, intended); len(ops) > 0 {
		t.Errorf("second apply ran %d operations, want none: %v", len(ops), describeOps(ops))
	}
	for _, fb := range fakes {
		restores -= len(fb.restores)
	}
	if restores != 0 {
		t.Errorf("second apply wrote %d transactions, want none", -restores)
	}
}

func describeOps(ops []reconciler.BatchOp) string {
	var s []string
	for _, op := range ops {
		s = append(s, fmt.Sprintf("%v old=%v new=%v", op.Op, op.Old, op.New))
	}
	return strings.Join(s, "; ")
}

// jumpsIn lists the targets of netagent's jumps in a built-in chain, and
// the other rules as "foreign:<args>", in kernel order.
func jumpsIn(fb *FakeIPTables, table, from string) []string {
	var out []string
	for _, r := range fb.tables[table].chains[from] {
		if len(r) == 6 && slices.Equal(r[:5], jumpRule("")[:5]) {
			out = append(out, r[5])
		} else {
			out = append(out, "foreign:"+strings.Join(r, " "))
		}
	}
	return out
}

func checkOrder(t *testing.T, fb *FakeIPTables, table, from string, want ...string) {
	t.Helper()
	if got := jumpsIn(fb, table, from); !slices.Equal(got, want) {
		t.Errorf("%s %s = %q, want %q", table, from, got, want)
	}
}

// TestChainsSharingAHook is issue 7's two chains jumping from FORWARD with
// no position: they used to both claim position 1 and swap on every apply.
// netagent's jumps in one built-in chain form one block, ordered by
// position then name; a foreign rule keeps its place among its own rules.
func TestChainsSharingAHook(t *testing.T) {
	c, fakes := newFakeDualChains(t)
	seedForward(fakes[items.FamilyIPv4])
	applyTwice(t, c, fakes, renderChains(t, `
		{"table": "filter", "name": "NA-B", "jumpFrom": "FORWARD", "family": "both", "rules": ["-j ACCEPT"]},
		{"table": "filter", "name": "NA-A", "jumpFrom": "FORWARD", "family": "both", "rules": ["-j ACCEPT"]}`))
	checkOrder(t, fakes[items.FamilyIPv4], "filter", "FORWARD", "NA-A", "NA-B", "foreign:-j LOG")
	checkOrder(t, fakes[items.FamilyIPv6], "filter", "FORWARD", "NA-A", "NA-B")
}

// TestChainBlockOrder: three and more chains on one hook, explicit
// positions ordering the block and ties broken by name, in both families,
// with foreign rules before and after.
func TestChainBlockOrder(t *testing.T) {
	c, fakes := newFakeDualChains(t)
	v4 := fakes[items.FamilyIPv4]
	v := newTableView()
	v.addRule("FORWARD", []string{"-j", "LOG"})
	v.addRule("FORWARD", []string{"-j", "DROP"})
	v4.tables["filter"] = v
	chains := `
		{"table": "filter", "name": "NA-D", "jumpFrom": "FORWARD", "family": "both", "position": 2},
		{"table": "filter", "name": "NA-C", "jumpFrom": "FORWARD", "family": "both"},
		{"table": "filter", "name": "NA-B", "jumpFrom": "FORWARD", "family": "both"},
		{"table": "filter", "name": "NA-A", "jumpFrom": "FORWARD", "family": "both", "position": 9}`
	applyTwice(t, c, fakes, renderChains(t, chains))
	checkOrder(t, v4, "filter", "FORWARD", "NA-B", "NA-C", "NA-D", "NA-A", "foreign:-j LOG", "foreign:-j DROP")
	checkOrder(t, fakes[items.FamilyIPv6], "filter", "FORWARD", "NA-B", "NA-C", "NA-D", "NA-A")

	// The block moves as a whole: after the first foreign rule.
	moved := `
		{"table": "filter", "name": "NA-D", "jumpFrom": "FORWARD", "family": "both", "position": 4},
		{"table": "filter", "name": "NA-C", "jumpFrom": "FORWARD", "family": "both", "position": 3},
		{"table": "filter", "name": "NA-B", "jumpFrom": "FORWARD", "family": "both", "position": 2},
		{"table": "filter", "name": "NA-A", "jumpFrom": "FORWARD", "family": "both", "position": 9}`
	applyTwice(t, c, fakes, renderChains(t, moved))
	checkOrder(t, v4, "filter", "FORWARD", "foreign:-j LOG", "NA-B", "NA-C", "NA-D", "NA-A", "foreign:-j DROP")
	checkOrder(t, fakes[items.FamilyIPv6], "filter", "FORWARD", "NA-B", "NA-C", "NA-D", "NA-A")
}

// TestChainRemovedFromBlock: a chain leaves the middle of the block; the
// rest close up in one apply, and the foreign rule stays where it was
// among the foreign rules.
func TestChainRemovedFromBlock(t *testing.T) {
	c, fakes := newFakeDualChains(t)
	seedForward(fakes[items.FamilyIPv4])
	all := []string{
		`{"table": "filter", "name": "NA-A", "jumpFrom": "FORWARD"}`,
		`{"table": "filter", "name": "NA-B", "jumpFrom": "FORWARD"}`,
		`{"table": "filter", "name": "NA-C", "jumpFrom": "FORWARD"}`,
	}
	applyTwice(t, c, fakes, renderChains(t, strings.Join(all, ",")))
	checkOrder(t, fakes[items.FamilyIPv4], "filter", "FORWARD", "NA-A", "NA-B", "NA-C", "foreign:-j LOG")
	applyTwice(t, c, fakes, renderChains(t, all[0]+","+all[2]))
	checkOrder(t, fakes[items.FamilyIPv4], "filter", "FORWARD", "NA-A", "NA-C", "foreign:-j LOG")
	if _, ok := fakes[items.FamilyIPv4].tables["filter"].chains["NA-B"]; ok {
		t.Error("NA-B still exists")
	}
}

// TestChainBlockPastTheEnd: a block asked to start past the built-in
// chain's own rules starts right after them, its jumps in order, and reads
// back as asked.
func TestChainBlockPastTheEnd(t *testing.T) {
	c, fakes := newFakeDualChains(t)
	v4 := fakes[items.FamilyIPv4]
	seedForward(v4)
	chains := renderChains(t, `
		{"table": "filter", "name": "NA-Y", "jumpFrom": "FORWARD", "position": 5},
		{"table": "filter", "name": "NA-X", "jumpFrom": "FORWARD", "position": 7}`)
	applyTwice(t, c, fakes, chains)
	checkOrder(t, v4, "filter", "FORWARD", "foreign:-j LOG", "NA-Y", "NA-X")

	// Someone appends two rules after the block: it was asked at 5, still
	// past the three foreign rules, so it moves to right after them.
	v4.tables["filter"].addRule("FORWARD", []string{"-j", "DROP"})
	v4.tables["filter"].addRule("FORWARD", []string{"-j", "ACCEPT"})
	applyTwice(t, c, fakes, chains)
	checkOrder(t, v4, "filter", "FORWARD", "foreign:-j LOG", "foreign:-j DROP", "foreign:-j ACCEPT", "NA-Y", "NA-X")
}
