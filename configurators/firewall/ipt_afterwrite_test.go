package firewall

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/configurators/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// fakeRunner plays iptables-save and iptables-restore over a fakeBackend,
// for an execBackend.
type fakeRunner struct{ fb *fakeBackend }

func (r fakeRunner) run(ctx context.Context, stdin []byte, argv ...string) ([]byte, error) {
	switch argv[0] {
	case "iptables-save":
		r.fb.saves++
		var b strings.Builder
		for _, name := range sortedKeys(r.fb.tables) {
			v := r.fb.tables[name]
			fmt.Fprintf(&b, "*%s\n", name)
			for _, ch := range v.order {
				fmt.Fprintf(&b, ":%s - [0:0]\n", ch)
			}
			for _, ch := range v.order {
				for _, rule := range v.chains[ch] {
					fmt.Fprintf(&b, "-A %s %s\n", ch, strings.Join(rule, " "))
				}
			}
			b.WriteString("COMMIT\n")
		}
		return []byte(b.String()), nil
	case "iptables-restore":
		return nil, r.fb.restore(ctx, stdin)
	}
	return nil, fmt.Errorf("unexpected %v", argv)
}

// TestReadBackAfterWriteReusesSave: the read-back right after a batch
// (permitted by ReuseAfterWrite) has the tables the batch saved after its
// write, with no iptables-save of its own; any restore since, or a second
// read-back, saves again.
func TestReadBackAfterWriteReusesSave(t *testing.T) {
	ctx := context.Background()
	fb := newFakeBackend()
	fb.normalize = normalizeLikeIptables
	fb.tables["filter"] = newTableView()
	fb.tables["filter"].addChain("FORWARD")
	tgt := &netnsx.Target{Name: fmt.Sprintf("na-afterwrite-%p", fb)}
	eb := &execBackend{run: fakeRunner{fb}, saveCmd: "iptables-save", restoreCmd: "iptables-restore",
		key: afterWriteKey{netns: tgt.Name, fam: items.FamilyIPv4}}
	c, _ := newFakeChains(t)
	c.backends[items.FamilyIPv4] = eb
	readBack := func() []string {
		backends := c.backends
		if takeReusePermit(tgt.Name) {
			backends = withSaved(backends)
		}
		got, err := readBackChains(ctx, backends, c.records, c.made, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range got {
			ch := it.(*items.IptablesChain)
			out = append(out, fmt.Sprintf("%s %v", ch.Chain, ch.Rules))
		}
		return out
	}

	ch := fwdChain(ruleLAN, []string{"-s", "10.0.0.1", "-j", "DROP"})
	for _, err := range c.ApplyBatch(ctx, []reconciler.BatchOp{{Op: reconciler.OpCreate, New: ch}}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	saves := fb.saves
	ReuseAfterWrite(tgt)
	first := readBack()
	if fb.saves != saves {
		t.Errorf("the read-back after the write ran iptables-save (%d saves, want %d)", fb.saves, saves)
	}
	if len(first) != 1 || !strings.Contains(first[0], "-s 10.0.0.1 -j DROP") {
		t.Errorf("read back %v, want NA-FWD as written (the kernel's form learnt)", first)
	}
	if again := readBack(); fb.saves != saves+1 || fmt.Sprint(again) != fmt.Sprint(first) {
		t.Errorf("a read-back without a permit: %d saves (want %d), %v", fb.saves, saves+1, again)
	}

	// A permit ended before a read-back took it reaches no later one.
	ReuseAfterWrite(tgt)()
	if readBack(); fb.saves != saves+2 {
		t.Errorf("a read-back after an ended permit did not save (%d saves, want %d)", fb.saves, saves+2)
	}
	saves++ // counted from here on as before

	// A write after the save: the saved tables are stale.
	if err := eb.restore(ctx, []byte("*filter\n-A NA-FWD -j LOG\nCOMMIT\n")); err != nil {
		t.Fatal(err)
	}
	ReuseAfterWrite(tgt)
	after := readBack()
	if fb.saves != saves+2 {
		t.Errorf("a read-back after another restore did not save (%d saves, want %d)", fb.saves, saves+2)
	}
	if len(after) != 1 || !strings.Contains(after[0], "LOG") {
		t.Errorf("read back %v, want the rule written since", after)
	}
}

// TestBatchAfterReadBackPlansAgainstItsSave: a batch right after a
// read-back plans against the read-back's save (no iptables-save of its
// own, only the one after the write); a chain someone made in between
// fails the transaction (-N) and is refused, never flushed; a restore
// since, or a save older than readBackReuse, makes the batch save again.
func TestBatchAfterReadBackPlansAgainstItsSave(t *testing.T) {
	ctx := context.Background()
	fb := newFakeBackend()
	fb.normalize = normalizeLikeIptables
	fb.tables["filter"] = newTableView()
	fb.tables["filter"].addChain("FORWARD")
	tgt := &netnsx.Target{Name: fmt.Sprintf("na-readback-%p", fb)}
	eb := &execBackend{run: fakeRunner{fb}, saveCmd: "iptables-save", restoreCmd: "iptables-restore",
		key: afterWriteKey{netns: tgt.Name, fam: items.FamilyIPv4},
		do:  func(f func() error) error { return f() }, newLister: func() (lister, error) { return fakeLister{fb}, nil }}
	c, _ := newFakeChains(t)
	c.backends[items.FamilyIPv4] = eb
	clock := time.Now()
	now = func() time.Time { return clock }
	t.Cleanup(func() { now = time.Now })
	readBack := func() {
		t.Helper()
		if _, err := readBackChains(ctx, c.backends, c.records, c.made, nil); err != nil {
			t.Fatal(err)
		}
	}
	apply := func(ch *items.IptablesChain) error {
		t.Helper()
		return c.ApplyBatch(ctx, []reconciler.BatchOp{{Op: reconciler.OpCreate, New: ch}})[0]
	}

	readBack()
	saves := fb.saves
	if err := apply(fwdChain(ruleLAN)); err != nil {
		t.Fatal(err)
	}
	if fb.saves != saves+1 {
		t.Errorf("the batch right after the read-back saved %d times, want 1 (after its write)", fb.saves-saves)
	}

	// Someone makes a chain of a wanted name after the read-back.
	readBack()
	fb.tables["filter"].addRule("NA-OTHER", ruleForeign)
	other := &items.IptablesChain{Family: items.FamilyIPv4, Table: "filter", Chain: "NA-OTHER", Rules: [][]string{ruleLAN}}
	if err := apply(other); !errors.Is(err, ErrNotOwned) {
		t.Errorf("create over a chain made after the read-back: %v, want ErrNotOwned", err)
	}
	if got := fb.tables["filter"].chains["NA-OTHER"]; len(got) != 1 || !slices.Equal(got[0], ruleForeign) {
		t.Errorf("the foreign chain holds %v, want its own rule only", got)
	}

	// A save older than readBackReuse is not planned against.
	readBack()
	clock = clock.Add(readBackReuse + time.Millisecond)
	saves = fb.saves
	if err := apply(fwdChain(ruleLAN, ruleEst)); err != nil {
		t.Fatal(err)
	}
	if fb.saves != saves+2 {
		t.Errorf("a batch after an old read-back saved %d times, want 2 (before and after its write)", fb.saves-saves)
	}

	// Nor one a restore overtook.
	readBack()
	if err := eb.restore(ctx, []byte("*filter\n-A FORWARD -j LOG\nCOMMIT\n")); err != nil {
		t.Fatal(err)
	}
	saves = fb.saves
	if err := apply(fwdChain(ruleLAN)); err != nil {
		t.Fatal(err)
	}
	if fb.saves != saves+2 {
		t.Errorf("a batch after a restore since the read-back saved %d times, want 2", fb.saves-saves)
	}
}

// fakeLister plays iptables -S over a fakeBackend, for an execBackend.
type fakeLister struct{ fb *fakeBackend }

func (l fakeLister) List(table, chain string) ([]string, error) {
	v := l.fb.tables[table]
	rules, ok := v.rules(chain)
	if v == nil || !ok {
		return nil, errors.New("fakeLister: no such chain") // not iptables' "no chain" status: the test lists none
	}
	out := []string{"-N " + chain}
	for _, r := range rules {
		out = append(out, "-A "+chain+" "+strings.Join(r, " "))
	}
	return out, nil
}
