package firewall

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// listingBackend is an execBackend over fb whose restores list what they
// write (as iptables-nft's do), named for a namespace of its own.
func listingBackend(fb *FakeIPTables) (*execBackend, *netnsx.Target) {
	tgt := &netnsx.Target{Name: fmt.Sprintf("na-listing-%p", fb)}
	eb := &execBackend{run: fakeRunner{fb}, saveCmd: "iptables-save", restoreCmd: "iptables-restore",
		key: afterWriteKey{netns: tgt.Name, fam: items.FamilyIPv4},
		do:  func(f func() error) error { return f() }, newLister: func() (lister, error) { return fakeLister{fb}, nil }}
	eb.listing.Store(true)
	return eb, tgt
}

// TestBatchLearnsFromTheRestoresListing: where the restore lists the table
// it wrote, a batch right after a read-back runs one iptables-restore and
// no iptables-save; it learns the kernel's spelling of the rules from the
// listing (so a second apply writes nothing), and the read-back right
// after it (ReuseAfterWrite) has the table without a save either.
func TestBatchLearnsFromTheRestoresListing(t *testing.T) {
	ctx := context.Background()
	fb := NewFakeIPTables()
	fb.normalize = normalizeLikeIptables
	fb.tables["filter"] = newTableView()
	fb.tables["filter"].addRule("FORWARD", ruleForeign)
	fb.tables["filter"].addRule("SOMEONE", ruleForeign)
	eb, tgt := listingBackend(fb)
	c, _ := newFakeChains(t)
	c.backends[items.FamilyIPv4] = eb
	apply := func(ch *items.IptablesChain) {
		t.Helper()
		if _, err := readBackChains(ctx, c.backends, c.records, c.made, nil); err != nil {
			t.Fatal(err)
		}
		for _, err := range c.ApplyBatch(ctx, []reconciler.BatchOp{{Op: reconciler.OpCreate, New: ch}}) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}

	ch := fwdChain(ruleLAN, ruleEst, []string{"-s", "10.0.0.1", "-j", "DROP"})
	apply(ch)
	if fb.saves != 1 || len(fb.restores) != 1 {
		t.Errorf("read-back and batch: %d saves, %d restores; want 1 (the read-back's) and 1", fb.saves, len(fb.restores))
	}
	if !strings.HasSuffix(fb.restores[0], "\n-S\nCOMMIT\n") {
		t.Errorf("the restore does not list the table it writes:\n%s", fb.restores[0])
	}
	rec := c.records.get(ch.Name())
	if rec == nil || !equalRules(rec.Intended, ch.Rules) || !equalRules(rec.Kernel, fb.tables["filter"].chains["NA-FWD"][1:]) {
		t.Fatalf("record %+v, want the intended rules and the kernel's form of them", rec)
	}

	ReuseAfterWrite(tgt)
	got := readBackOwned(t, c, tgt.Name)
	if fb.saves != 1 {
		t.Errorf("the read-back after the write saved (%d saves, want 1)", fb.saves)
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0].(*items.IptablesChain).Rules, ch.Rules) ||
		got[0].(*items.IptablesChain).Position != ch.Position {
		t.Errorf("read back after the write: %v, want %v", got, ch)
	}

	apply(ch)
	if len(fb.restores) != 1 {
		t.Errorf("the same chain again wrote: %q", fb.restores[1:])
	}
	if got := fb.tables["filter"].chains["SOMEONE"]; len(got) != 1 {
		t.Errorf("someone else's chain holds %v", got)
	}
}

// TestBatchListingFallsBack: a restore that fails with the listing and
// works without it (an iptables that refuses "-S" in a restore) applies
// the batch, which then saves after its write as before, and the family's
// restores list nothing from then on.
func TestBatchListingFallsBack(t *testing.T) {
	ctx := context.Background()
	fb := NewFakeIPTables()
	fb.normalize = normalizeLikeIptables
	fb.failOn = "\n-S\n"
	eb, _ := listingBackend(fb)
	c, _ := newFakeChains(t)
	c.backends[items.FamilyIPv4] = eb
	ch := fwdChain([]string{"-s", "10.0.0.1", "-j", "DROP"})
	for _, err := range c.ApplyBatch(ctx, []reconciler.BatchOp{{Op: reconciler.OpCreate, New: ch}}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(fb.restores) != 2 || fb.saves != 2 || eb.listing.Load() {
		t.Errorf("%d restores, %d saves, listing %v; want 2 (with and without the listing), 2 (before and after), false",
			len(fb.restores), fb.saves, eb.listing.Load())
	}
	if got := fb.tables["filter"].chains["NA-FWD"]; len(got) != 2 {
		t.Errorf("NA-FWD holds %v, want the marker and the rule", got)
	}
	if rec := c.records.get(ch.Name()); rec == nil || !equalRules(rec.Kernel, [][]string{{"-s", "10.0.0.1/32", "-j", "DROP"}}) {
		t.Errorf("record %+v, want the kernel's form learnt from the save", rec)
	}

	// A transaction that fails without the listing too is retried one
	// operation at a time, as before.
	fb.failOn = "NA-BAD"
	eb.listing.Store(true)
	bad := &items.IptablesChain{Family: items.FamilyIPv4, Table: "filter", Chain: "NA-BAD", Rules: [][]string{ruleLAN}}
	errs := c.ApplyBatch(ctx, []reconciler.BatchOp{{Op: reconciler.OpCreate, New: bad}})
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "creating iptables chain ipv4/filter/NA-BAD") {
		t.Errorf("a failing transaction: %v, want the chain's own error", errs[0])
	}
	if !eb.listing.Load() {
		t.Error("a transaction that failed without the listing too stopped the listing")
	}
}

// TestListedAll: a listing counts only when it declares chains, among
// them every chain the plans wrote or moved a jump in, and none they
// deleted.
func TestListedAll(t *testing.T) {
	v := newTableView()
	v.addChain("FORWARD")
	v.addRule("NA-A", markerRule)
	write := &chainPlan{chain: "NA-A", write: true}
	jumpOnly := &chainPlan{chain: "NA-A", jump: &jumpSpec{from: "FORWARD", pos: 1}}
	for i, c := range []struct {
		listed *tableView
		plans  []*chainPlan
		want   bool
	}{
		{v, []*chainPlan{write}, true},
		{v, []*chainPlan{jumpOnly}, true},
		{v, []*chainPlan{write, {chain: "NA-B", write: true}}, false},
		{v, []*chainPlan{{chain: "NA-A", drop: true}}, false},
		{v, []*chainPlan{write, {chain: "NA-GONE", drop: true, delJumps: map[string]int{"FORWARD": 1}}}, true},
		{v, []*chainPlan{{chain: "NA-A", jump: &jumpSpec{from: "INPUT", pos: 1}}}, false},
		{v, []*chainPlan{{chain: "NA-GONE", drop: true, delJumps: map[string]int{"INPUT": 1}}}, false},
		{newTableView(), []*chainPlan{{chain: "NA-GONE", drop: true}}, false},
	} {
		if got := listedAll(c.listed, c.plans); got != c.want {
			t.Errorf("case %d: listedAll = %v, want %v", i, got, c.want)
		}
	}
}

// TestParseListing: a table as -S lists it reads as iptables-save's form
// of it does (chains in order, rules, their text); a listing printed twice
// counts once, the last.
func TestParseListing(t *testing.T) {
	listing := `-P INPUT ACCEPT
-P FORWARD DROP
-N NA-EMPTY
-N NA-FWD
-A FORWARD -m comment --comment netagent -j NA-FWD
-A NA-FWD -m comment --comment netagent
-A NA-FWD -s 10.0.0.1/32 -m comment --comment "a \"quoted\" comment" -j DROP
`
	save := `*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:NA-EMPTY - [0:0]
:NA-FWD - [0:0]
-A FORWARD -m comment --comment netagent -j NA-FWD
-A NA-FWD -m comment --comment netagent
-A NA-FWD -s 10.0.0.1/32 -m comment --comment "a \"quoted\" comment" -j DROP
COMMIT
`
	want, err := parseSave([]byte(save))
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]string{"once": listing, "twice": "-P INPUT ACCEPT\n-N NA-OLD\n-A NA-OLD -j LOG\n" + listing} {
		got, err := parseListing([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want["filter"]) {
			t.Errorf("%s: parseListing = %+v, want %+v", name, got, want["filter"])
		}
	}
	if _, err := parseListing([]byte("-N\n")); err == nil {
		t.Error("a declaration without a chain parsed")
	}
}

// parseListing parses a whole listing (newListingParser).
func parseListing(out []byte) (*tableView, error) {
	p := newListingParser()
	if err := p.write(out); err != nil {
		return nil, err
	}
	if _, err := p.finish(); err != nil {
		return nil, err
	}
	return p.cur, nil
}

// TestRestoreListingIsTheSave (root): iptables-nft's restore lists the
// table its transaction leaves exactly as iptables-save prints it after
// the commit (chains in order, the kernel's spelling of every rule);
// iptables-legacy's cannot, and its backend does not ask it to.
func TestRestoreListingIsTheSave(t *testing.T) {
	eachVariant(t, func(t *testing.T, variant, prog string) {
		tgt := testns.New(t)
		testns.Exec(t, tgt, prog, "-t", "filter", "-N", "someone-elses")
		testns.Exec(t, tgt, prog, "-t", "filter", "-A", "FORWARD", "-j", "LOG")
		pathWith(t, prog, prog+"-save", prog+"-restore") // this variant only
		b, err := newExecBackend(tgt, items.FamilyIPv4)
		if err != nil {
			t.Fatal(err)
		}
		eb := b.(*execBackend)
		if eb.listing.Load() != (variant == "nft") {
			t.Fatalf("listing %v for %s", eb.listing.Load(), variant)
		}
		if variant != "nft" {
			return
		}
		ch := &items.IptablesChain{Family: items.FamilyIPv4, Table: "filter", Chain: "NA-LIST", JumpFrom: "FORWARD", Position: 1,
			Rules: [][]string{
				{"-s", "10.0.0.5/24", "-p", "tcp", "--dport", "22", "-j", "ACCEPT"},
				{"-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"},
				{"!", "-i", "lo", "-d", "192.168.1.1", "-j", "DROP"},
				{"-m", "comment", "--comment", `a "quoted" comment`, "-j", "RETURN"},
				{"-p", "icmp", "--icmp-type", "echo-request", "-j", "ACCEPT"},
				{"-j", "LOG", "--log-prefix", "na: "},
			}}
		before, err := eb.save(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		p, err := planApply(before["filter"], nil, ch, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		listed, err := eb.restoreListed(context.Background(), renderTable("filter", before["filter"], []*chainPlan{p}, true))
		if err != nil || listed == nil {
			t.Fatalf("restore with the listing: %v, %v", listed, err)
		}
		saved, err := eb.save(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(listed, saved["filter"]) {
			t.Errorf("the restore listed %+v;\niptables-save: %+v", listed, saved["filter"])
		}
		if rules, _ := listed.rules("NA-LIST"); len(rules) != len(ch.Rules)+1 {
			t.Errorf("NA-LIST listed with %d rules, want %d", len(rules), len(ch.Rules)+1)
		}
	})
}
