package firewall

import (
	"context"
	"fmt"
	"strings"
	"testing"

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
