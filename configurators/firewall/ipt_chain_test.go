package firewall

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

func newFakeChains(t *testing.T) (*chainConfigurator, *FakeIPTables) {
	t.Helper()
	fb := NewFakeIPTables()
	fb.normalize = normalizeLikeIptables
	recs, err := loadRecords(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &chainConfigurator{backends: map[items.Family]backend{items.FamilyIPv4: fb}, records: recs}, fb
}

func fwdChain(rules ...[]string) *items.IptablesChain {
	return &items.IptablesChain{Family: items.FamilyIPv4, Table: "filter", Chain: "NA-FWD",
		JumpFrom: "FORWARD", Position: 2, Rules: rules}
}

var (
	ruleLAN     = []string{"-i", "br-lan", "-o", "uplink0", "-j", "ACCEPT"}
	ruleEst     = []string{"-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"}
	ruleHost    = []string{"-s", "10.0.0.1", "-m", "comment", "--comment", `a "quoted" comment`, "-j", "DROP"}
	ruleForeign = []string{"-j", "LOG"}
)

// seedForward puts a foreign rule into FORWARD, so positions matter.
func seedForward(fb *FakeIPTables) {
	v := newTableView()
	v.addRule("FORWARD", ruleForeign)
	fb.tables["filter"] = v
}

func TestChainCreateIsOneTransaction(t *testing.T) {
	c, fb := newFakeChains(t)
	seedForward(fb)
	if err := c.Create(context.Background(), fwdChain(ruleLAN, ruleEst, ruleHost)); err != nil {
		t.Fatal(err)
	}
	if len(fb.restores) != 1 {
		t.Fatalf("restores = %d, want 1", len(fb.restores))
	}
	want := "*filter\n" +
		"-N NA-FWD\n" +
		"-A NA-FWD -m comment --comment netagent\n" +
		"-A NA-FWD -i br-lan -o uplink0 -j ACCEPT\n" +
		"-A NA-FWD -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT\n" +
		`-A NA-FWD -s 10.0.0.1 -m comment --comment "a \"quoted\" comment" -j DROP` + "\n" +
		"-I FORWARD 2 -m comment --comment netagent -j NA-FWD\n" +
		"COMMIT\n"
	if fb.restores[0] != want {
		t.Errorf("restore input:\n%s\nwant:\n%s", fb.restores[0], want)
	}
	if got := fb.tables["filter"].chains["FORWARD"]; !slices.Equal(got[1], jumpRule("NA-FWD")) {
		t.Errorf("FORWARD = %q", got)
	}
}

func TestChainSameIntentWritesNothing(t *testing.T) {
	c, fb := newFakeChains(t)
	seedForward(fb)
	ctx := context.Background()
	ch := fwdChain(ruleLAN, ruleEst, ruleHost)
	if err := c.Create(ctx, ch); err != nil {
		t.Fatal(err)
	}
	// The kernel holds the normalised form; the record knows it.
	if got := fb.tables["filter"].chains["NA-FWD"][3]; got[1] != "10.0.0.1/32" {
		t.Fatalf("fake did not normalise: %q", got)
	}
	if err := c.Create(ctx, ch); err != nil {
		t.Fatal(err)
	}
	if err := c.Modify(ctx, ch, fwdChain(ruleLAN, ruleEst, ruleHost)); err != nil {
		t.Fatal(err)
	}
	// A restarted configurator loads the record from disk.
	recs, err := loadRecords(c.records.dir)
	if err != nil {
		t.Fatal(err)
	}
	c2 := &chainConfigurator{backends: c.backends, records: recs}
	if err := c2.Modify(ctx, ch, ch); err != nil {
		t.Fatal(err)
	}
	if len(fb.restores) != 1 {
		t.Errorf("restores = %d, want 1 (the first create only):\n%s", len(fb.restores), strings.Join(fb.restores, "---\n"))
	}
}

func TestChainModifyIsOneTransaction(t *testing.T) {
	c, fb := newFakeChains(t)
	seedForward(fb)
	ctx := context.Background()
	old := fwdChain(ruleLAN)
	if err := c.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	moved := fwdChain(ruleEst, ruleLAN)
	moved.Position = 1
	if err := c.Modify(ctx, old, moved); err != nil {
		t.Fatal(err)
	}
	if len(fb.restores) != 2 {
		t.Fatalf("restores = %d, want 2", len(fb.restores))
	}
	in := fb.restores[1]
	for _, want := range []string{":NA-FWD - [0:0]\n", "-D FORWARD -m comment --comment netagent -j NA-FWD\n",
		"-I FORWARD 1 -m comment --comment netagent -j NA-FWD\n"} {
		if !strings.Contains(in, want) {
			t.Errorf("modify input lacks %q:\n%s", want, in)
		}
	}
	if strings.Count(in, "COMMIT") != 1 {
		t.Errorf("modify input has %d COMMITs:\n%s", strings.Count(in, "COMMIT"), in)
	}
	fwd := fb.tables["filter"].chains["FORWARD"]
	if !slices.Equal(fwd[0], jumpRule("NA-FWD")) || !slices.Equal(fwd[1], ruleForeign) {
		t.Errorf("FORWARD = %q", fwd)
	}
}

func TestChainOnlyJumpMoves(t *testing.T) {
	c, fb := newFakeChains(t)
	seedForward(fb)
	ctx := context.Background()
	old := fwdChain(ruleLAN)
	if err := c.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	moved := fwdChain(ruleLAN)
	moved.Position = 1
	if err := c.Modify(ctx, old, moved); err != nil {
		t.Fatal(err)
	}
	if in := fb.restores[1]; strings.Contains(in, ":NA-FWD") {
		t.Errorf("moving the jump rewrote the chain:\n%s", in)
	}
}

func TestChainForeignRefused(t *testing.T) {
	c, fb := newFakeChains(t)
	v := newTableView()
	v.addRule("NA-FWD", []string{"-j", "ACCEPT"})
	fb.tables["filter"] = v
	ctx := context.Background()
	ch := fwdChain(ruleLAN)
	for name, err := range map[string]error{
		"create": c.Create(ctx, ch),
		"modify": c.Modify(ctx, ch, ch),
		"delete": c.Delete(ctx, ch),
	} {
		if !errors.Is(err, ErrNotOwned) {
			t.Errorf("%s: err = %v, want ErrNotOwned", name, err)
		}
	}
	if len(fb.restores) != 0 {
		t.Errorf("wrote to a foreign chain: %q", fb.restores)
	}
}

func TestChainDeleteTwice(t *testing.T) {
	c, fb := newFakeChains(t)
	seedForward(fb)
	ctx := context.Background()
	ch := fwdChain(ruleLAN)
	if err := c.Create(ctx, ch); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := c.Delete(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	if len(fb.restores) != 2 {
		t.Errorf("restores = %d, want 2", len(fb.restores))
	}
	if _, ok := fb.tables["filter"].chains["NA-FWD"]; ok {
		t.Error("chain still there")
	}
	if fwd := fb.tables["filter"].chains["FORWARD"]; len(fwd) != 1 {
		t.Errorf("FORWARD = %q, want the foreign rule only", fwd)
	}
	if c.records.get(ch.Name()) != nil {
		t.Error("record kept after delete")
	}
}

func TestChainBadArgumentRefused(t *testing.T) {
	c, fb := newFakeChains(t)
	err := c.Create(context.Background(), fwdChain([]string{"-m", "comment", "--comment", "a\nb", "-j", "ACCEPT"}))
	if !errors.Is(err, ErrBadArgument) || len(fb.restores) != 0 {
		t.Errorf("err = %v, restores = %d", err, len(fb.restores))
	}
}

func natChain(name string, pos int) *items.IptablesChain {
	return &items.IptablesChain{Family: items.FamilyIPv4, Table: "nat", Chain: name, JumpFrom: "POSTROUTING",
		Position: pos, Rules: [][]string{{"-s", "192.168.50.0/24", "-o", "uplink0", "-j", "MASQUERADE"}}}
}

func TestBatchOneTransactionPerTable(t *testing.T) {
	c, fb := newFakeChains(t)
	seedForward(fb)
	var ops []reconciler.BatchOp
	for i, name := range []string{"A", "B", "C"} {
		ops = append(ops, reconciler.BatchOp{Op: reconciler.OpCreate, New: natChain(name, 3-i)})
		f := fwdChain(ruleLAN)
		f.Chain, f.Position = "F"+name, i+1
		ops = append(ops, reconciler.BatchOp{Op: reconciler.OpCreate, New: f})
	}
	for i, err := range c.ApplyBatch(context.Background(), ops) {
		if err != nil {
			t.Errorf("op %d: %v", i, err)
		}
	}
	if len(fb.restores) != 2 || fb.saves != 3 {
		t.Errorf("restores = %d, saves = %d; want 2 and 3", len(fb.restores), fb.saves)
	}
	// Every jump is where its item says, whatever the order of the ops.
	post := fb.tables["nat"].chains["POSTROUTING"]
	for i, want := range []string{"C", "B", "A"} {
		if !slices.Equal(post[i], jumpRule(want)) {
			t.Errorf("POSTROUTING[%d] = %q, want jump to %s", i, post[i], want)
		}
	}
	fwd := fb.tables["filter"].chains["FORWARD"]
	for i, want := range []string{"FA", "FB", "FC"} {
		if !slices.Equal(fwd[i], jumpRule(want)) {
			t.Errorf("FORWARD[%d] = %q, want jump to %s", i, fwd[i], want)
		}
	}
	// Again: nothing to write.
	for i, err := range c.ApplyBatch(context.Background(), ops) {
		if err != nil {
			t.Errorf("again, op %d: %v", i, err)
		}
	}
	if len(fb.restores) != 2 {
		t.Errorf("restores after the same batch again = %d, want 2", len(fb.restores))
	}
}

func TestBatchFailureIsAttributed(t *testing.T) {
	c, fb := newFakeChains(t)
	bad := natChain("BAD", 1)
	bad.Rules = [][]string{{"-j", "NOSUCHTARGET"}}
	fb.failOn = "NOSUCHTARGET"
	ops := []reconciler.BatchOp{
		{Op: reconciler.OpCreate, New: natChain("GOOD", 1)},
		{Op: reconciler.OpCreate, New: bad},
	}
	errs := c.ApplyBatch(context.Background(), ops)
	if errs[0] != nil || !errors.Is(errs[1], errFakeRestore) {
		t.Fatalf("errs = %v", errs)
	}
	if _, ok := fb.tables["nat"].chains["GOOD"]; !ok {
		t.Error("the good chain was not created by the one-by-one retry")
	}
	if _, ok := fb.tables["nat"].chains["BAD"]; ok {
		t.Error("the bad chain exists")
	}
}

// TestReadBackRoundTrip: chains read back as applied (the intended item
// itself), one changed by someone else as the kernel holds it; without a
// hint, the record gives the intended spelling; without it, the kernel's.
func TestReadBackRoundTrip(t *testing.T) {
	c, fb := newFakeChains(t)
	seedForward(fb)
	ctx := context.Background()
	ch := fwdChain(ruleLAN, ruleEst, ruleHost)
	ch.Deps = []dg.ItemRef{{Type: "interface", Name: "br-lan"}}
	far := natChain("FAR", 9) // past the end: appended
	noJump := natChain("NOJUMP", 4)
	noJump.JumpFrom = ""
	for _, it := range []*items.IptablesChain{ch, far, noJump} {
		if err := c.Create(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	hint := dg.New("intent", ch, far, noJump)
	got, err := readBackChains(ctx, c.backends, c.records, c.made, hint)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("read back %d chains: %v", len(got), got)
	}
	for _, it := range got {
		want, _ := hint.Get(dg.Ref(it))
		if it != want { // as intended: the hint's item itself, not a copy
			t.Errorf("read back %v (%p), applied %v (%p)", it, it, want, want)
		}
	}
	// A chain changed by someone else reads back as the kernel holds it.
	kept := fb.tables["filter"].chains["NA-FWD"]
	fb.tables["filter"].chains["NA-FWD"] = kept[:2]
	got, _ = readBackChains(ctx, c.backends, c.records, c.made, hint)
	for _, it := range got {
		if it.Name() == ch.Name() && (it == dg.Item(ch) || len(it.(*items.IptablesChain).Rules) != 1) {
			t.Errorf("changed chain read back as %v", it)
		}
	}
	fb.tables["filter"].chains["NA-FWD"] = kept
	// Without a hint the record still gives the intended spelling; without
	// the record, the kernel's form.
	got, _ = readBackChains(ctx, c.backends, c.records, c.made, nil)
	for _, it := range got {
		if it.Name() == ch.Name() && !equalRules(it.(*items.IptablesChain).Rules, ch.Rules) {
			t.Errorf("no hint: rules %q", it.(*items.IptablesChain).Rules)
		}
	}
	empty, _ := loadRecords("")
	got, _ = readBackChains(ctx, c.backends, empty, c.made, nil)
	for _, it := range got {
		if it.Name() == ch.Name() && it.(*items.IptablesChain).Rules[2][1] != "10.0.0.1/32" {
			t.Errorf("no record: rules %q, want the kernel's form", it.(*items.IptablesChain).Rules)
		}
	}
}

func TestChainRecordOnlyWhenRespelled(t *testing.T) {
	c, _ := newFakeChains(t)
	ctx := context.Background()
	plain := fwdChain(ruleLAN)
	respelled := fwdChain(ruleHost)
	respelled.Chain = "NA-HOST"
	for _, ch := range []*items.IptablesChain{plain, respelled} {
		if err := c.Create(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	if c.records.get(plain.Name()) != nil {
		t.Error("record kept for rules the kernel spells as written")
	}
	rec := c.records.get(respelled.Name())
	if rec == nil || rec.Kernel[0][1] != "10.0.0.1/32" || !equalRules(rec.Intended, respelled.Rules) {
		t.Errorf("record %+v", rec)
	}
}
