package host

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// BenchmarkJournalRecord is the journal's cost for a wave of 100k creates
// (100k "absent" images in one fsynced record).
func BenchmarkJournalRecord(b *testing.B) {
	ops := make([]reconciler.PlannedOp, 100000)
	for i := range ops {
		r := &items.Route{Dst: netip.MustParsePrefix(fmt.Sprintf("10.%d.%d.%d/28", i/4096, i/16%256, i%16*16)), Table: 100}
		ops[i] = reconciler.PlannedOp{Op: reconciler.OpCreate, Ref: dg.Ref(r), New: r}
	}
	for i := 0; i < b.N; i++ {
		j, err := createJournal(filepath.Join(b.TempDir(), "j"))
		if err != nil {
			b.Fatal(err)
		}
		if err := j.Record(ops); err != nil {
			b.Fatal(err)
		}
		j.Close()
	}
}
