package firewall

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// madeChecking is a fake backend that, at every restore, reads the record
// of made chains from disk (as a restarted agent would): every chain of
// the batch must be in it already.
type madeChecking struct {
	*FakeIPTables
	t    *testing.T
	dir  string
	ns   statefile.NsIdentity
	want []string
}

func (m *madeChecking) restore(ctx context.Context, input []byte) error {
	m.t.Helper()
	onDisk := loadMade(m.dir, m.ns)
	for _, name := range m.want {
		if !onDisk.has(name) {
			m.t.Errorf("restore before %s is recorded as made", name)
		}
	}
	return m.FakeIPTables.restore(ctx, input)
}

// TestBatchRecordsMadeBeforeRestore: a batch records every chain it
// writes as made (in one write) before its one transaction.
func TestBatchRecordsMadeBeforeRestore(t *testing.T) {
	dir := t.TempDir()
	c, fb := newFakeMadeChains(t, dir, testNs)
	var ops []reconciler.BatchOp
	var names []string
	for i := range 20 {
		ch := fwdChain(ruleLAN)
		ch.Chain, ch.Position = fmt.Sprintf("NA-%02d", i), i+1
		ops = append(ops, reconciler.BatchOp{Op: reconciler.OpCreate, New: ch})
		names = append(names, ch.Name())
	}
	c.backends[items.FamilyIPv4] = &madeChecking{FakeIPTables: fb, t: t, dir: dir, ns: testNs, want: names}
	for i, err := range c.ApplyBatch(context.Background(), ops) {
		if err != nil {
			t.Errorf("create %s: %v", names[i], err)
		}
	}
	if len(fb.restores) != 1 {
		t.Fatalf("%d restores, want 1", len(fb.restores))
	}
	onDisk := loadMade(dir, testNs)
	if !slices.ContainsFunc(names, onDisk.has) || slices.ContainsFunc(names, func(n string) bool { return !onDisk.has(n) }) {
		t.Errorf("record after the batch lacks chains of it")
	}
}
