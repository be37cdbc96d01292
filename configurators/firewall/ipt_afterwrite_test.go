package firewall

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// TestReadBackAfterWriteReusesSave: the read-back right after a batch
// (permitted by ReuseAfterWrite) has the tables the batch saved after its
// write, with no iptables-save of its own; any restore since, or a second
// read-back, saves again.
func TestReadBackAfterWriteReusesSave(t *testing.T) {
	ctx := context.Background()
	fb := NewFakeIPTables()
	fb.normalize = normalizeLikeIptables
	fb.tables["filter"] = newTableView()
	fb.tables["filter"].addChain("FORWARD")
	tgt := &netnsx.Target{Name: fmt.Sprintf("na-afterwrite-%p", fb)}
	eb := &execBackend{run: fakeRunner{fb}, saveCmd: "iptables-save", restoreCmd: "iptables-restore",
		key: afterWriteKey{netns: tgt.Name, fam: items.FamilyIPv4}}
	c, _ := newFakeChains(t)
	c.backends[items.FamilyIPv4] = eb
	readBack := func() []string {
		var out []string
		for _, it := range readBackOwned(t, c, tgt.Name) {
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
	fb := NewFakeIPTables()
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

// TestReadBackAfterWriteKeepsUnwrittenFamily: the read-back right after a
// batch that wrote IPv4 only has, for IPv6, the tables the read-back
// before the batch saved: no ip6tables-save. Not without a permit (which
// sees a change someone else made in between), nor after a restore of
// IPv6 since, nor when that save is older than readBackReuse, counted
// from the save itself however many read-backs reused it.
func TestReadBackAfterWriteKeepsUnwrittenFamily(t *testing.T) {
	ctx := context.Background()
	tgt := &netnsx.Target{Name: fmt.Sprintf("na-unwritten-%p", t)}
	c, _ := newFakeChains(t)
	fakes := map[items.Family]*FakeIPTables{}
	for _, fam := range families {
		fb := NewFakeIPTables()
		fb.tables["filter"] = newTableView()
		fb.tables["filter"].addChain("FORWARD")
		fakes[fam] = fb
		c.backends[fam] = &execBackend{run: fakeRunner{fb}, saveCmd: "iptables-save", restoreCmd: "iptables-restore",
			key: afterWriteKey{netns: tgt.Name, fam: fam}}
	}
	v4, v6 := fakes[items.FamilyIPv4], fakes[items.FamilyIPv6]
	clock := time.Now()
	now = func() time.Time { return clock }
	t.Cleanup(func() { now = time.Now })
	readBack := func(permit bool) []string {
		t.Helper()
		if permit {
			ReuseAfterWrite(tgt)
		}
		var out []string
		for _, it := range readBackOwned(t, c, tgt.Name) {
			out = append(out, it.Name())
		}
		return out
	}
	write := func(fam items.Family, name string) {
		t.Helper()
		ch := &items.IptablesChain{Family: fam, Table: "filter", Chain: name, Rules: [][]string{ruleLAN}}
		for _, err := range c.ApplyBatch(ctx, []reconciler.BatchOp{{Op: reconciler.OpCreate, New: ch}}) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	saves := func() [2]int { return [2]int{v4.saves, v6.saves} }

	v6.tables["filter"].addRule("NA-SIX", markerRule) // the IPv6 chain, from an earlier run
	readBack(false)
	before := saves()
	write(items.FamilyIPv4, "NA-FOUR")
	clock = clock.Add(readBackReuse / 2)
	got := readBack(true)
	if s := saves(); s != [2]int{before[0] + 1, before[1]} { // the batch's save after its write
		t.Errorf("saves (v4, v6) after the batch and the read-back after it: %v, want %v", s, [2]int{before[0] + 1, before[1]})
	}
	if fmt.Sprint(got) != "[ipv4/filter/NA-FOUR ipv6/filter/NA-SIX]" {
		t.Errorf("read back %v", got)
	}

	// Someone else deletes the IPv6 chain: a read-back without a permit
	// sees it.
	v6.tables["filter"] = newTableView()
	before = saves()
	if got := readBack(false); fmt.Sprint(got) != "[ipv4/filter/NA-FOUR]" || saves() != [2]int{before[0] + 1, before[1] + 1} {
		t.Errorf("without a permit: read back %v, saves %v (from %v)", got, saves(), before)
	}

	// A restore of IPv6 since the read-back: saved again.
	write(items.FamilyIPv6, "NA-SIX")
	write(items.FamilyIPv4, "NA-FOUR2")
	before = saves()
	if got := readBack(true); len(got) != 3 || saves() != before {
		t.Errorf("after writes of both: read back %v, saves %v (from %v), want the batches' saves reused", got, saves(), before)
	}
	readBack(false)
	if err := c.backends[items.FamilyIPv6].restore(ctx, []byte("*filter\n-A FORWARD -j LOG\nCOMMIT\n")); err != nil {
		t.Fatal(err)
	}
	write(items.FamilyIPv4, "NA-FOUR3")
	before = saves()
	if readBack(true); saves()[1] != before[1]+1 {
		t.Errorf("a restore of IPv6 since the read-back: %d ip6tables-saves, want 1", saves()[1]-before[1])
	}

	// The save reused, not the read-backs that reused it, counts for
	// readBackReuse.
	for i := range 2 {
		write(items.FamilyIPv4, fmt.Sprintf("NA-AGAIN%d", i))
		clock = clock.Add(readBackReuse * 3 / 4)
		before = saves()
		readBack(true)
		if want := before[1] + i; saves()[1] != want {
			t.Errorf("read-back %d after the save: %d ip6tables-saves, want %d", i+1, saves()[1]-before[1], i)
		}
	}
}

// readBackOwned reads c's chains back as a read-back of netns does, with
// the tables kept after a write if a permit was given (ReuseAfterWrite).
func readBackOwned(t *testing.T, c *chainConfigurator, netns string) []dg.Item {
	t.Helper()
	backends := c.backends
	if takeReusePermit(netns) {
		backends = withSaved(backends)
	}
	got, err := readBackChains(context.Background(), backends, c.records, c.made, nil)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
