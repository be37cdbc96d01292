package firewall

import (
	"context"
	"sync"
	"time"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// The tables as seen right after netagent's last write, per namespace and
// family (ApplyBatch has the restore list the table it wrote, or saves
// them, to learn the kernel's spelling of the rules), and as the last
// read-back saved them. A caller that reads back
// right after its own write (the one-shot's next pass) may have them
// instead of a second iptables-save: see ReuseAfterWrite. Any restore in the namespace and family drops them
// (iptables-restore always goes through execBackend.restore), and a save
// that a restore overtook is not kept. Writes by other processes are not
// seen, which is why only a read-back the caller marks as following its own
// write uses them: another writer in that moment is indistinguishable from
// one just after the read-back.
var afterWrite = struct {
	mu      sync.Mutex
	gen     map[afterWriteKey]uint64 // restores so far
	tables  map[afterWriteKey]savedTables
	permits map[string]bool // by namespace: the next ReadBack may reuse
	// readBack: the tables the last read-back saved, for the write that
	// follows it (see readBackTables).
	readBack map[afterWriteKey]savedTables
}{
	gen:      make(map[afterWriteKey]uint64),
	tables:   make(map[afterWriteKey]savedTables),
	permits:  make(map[string]bool),
	readBack: make(map[afterWriteKey]savedTables),
}

type afterWriteKey struct {
	netns string
	fam   items.Family
}

type savedTables struct {
	gen    uint64
	at     time.Time // when the save started
	tables map[string]*tableView
}

// wrote notes a restore (before it runs): what was saved before is stale.
func (k afterWriteKey) wrote() {
	afterWrite.mu.Lock()
	defer afterWrite.mu.Unlock()
	afterWrite.gen[k]++
	delete(afterWrite.tables, k)
	delete(afterWrite.readBack, k)
}

// readBackReuse is how old a read-back's save may be for a write to plan
// against it instead of saving again (see readBackTables).
const readBackReuse = time.Second

// now is the clock of readBackTables (tests set it).
var now = time.Now

// keepReadBack stores the tables a read-back saved, the save having
// started at at when the generation was gen, unless a restore came since.
func (k afterWriteKey) keepReadBack(gen uint64, at time.Time, tables map[string]*tableView) {
	afterWrite.mu.Lock()
	defer afterWrite.mu.Unlock()
	if afterWrite.gen[k] == gen {
		afterWrite.readBack[k] = savedTables{gen: gen, at: at, tables: tables}
	}
}

// readBackTables returns the tables the last read-back saved, and when,
// if no restore came since and the save is at most readBackReuse old: the
// read-back that precedes a reconcile has just seen the kernel, and
// ApplyBatch plans against that instead of saving the same tables again.
// A foreign change in that moment is as possible as one between a fresh
// save and the restore: the restore guards what matters (a chain the view
// lacks is created with -N, which fails the transaction when a chain of
// that name appeared; jumps are deleted by spec, which fails when the
// jump is gone), and a failed transaction is retried one operation at a
// time, each with its own fresh look at the kernel.
func (k afterWriteKey) readBackTables() (savedTables, bool) {
	return k.lastReadBack()
}

// lastReadBack returns what the last read-back saved when no restore came
// since and the save is at most readBackReuse old.
func (k afterWriteKey) lastReadBack() (savedTables, bool) {
	afterWrite.mu.Lock()
	defer afterWrite.mu.Unlock()
	s, ok := afterWrite.readBack[k]
	if !ok || s.gen != afterWrite.gen[k] || now().Sub(s.at) > readBackReuse {
		return savedTables{}, false
	}
	return s, true
}

// generation is the number of restores so far.
func (k afterWriteKey) generation() uint64 {
	afterWrite.mu.Lock()
	defer afterWrite.mu.Unlock()
	return afterWrite.gen[k]
}

// keep stores tables saved when the generation was gen, the save having
// started at at, unless a restore came since.
func (k afterWriteKey) keep(gen uint64, at time.Time, tables map[string]*tableView) {
	afterWrite.mu.Lock()
	defer afterWrite.mu.Unlock()
	if afterWrite.gen[k] == gen {
		afterWrite.tables[k] = savedTables{gen: gen, at: at, tables: tables}
	}
}

// saved returns the tables kept since the last restore.
func (k afterWriteKey) saved() (savedTables, bool) {
	afterWrite.mu.Lock()
	defer afterWrite.mu.Unlock()
	s, ok := afterWrite.tables[k]
	if !ok || s.gen != afterWrite.gen[k] {
		return savedTables{}, false
	}
	return s, true
}

// ReuseAfterWrite lets the next ReadBack of t's namespace (only the next,
// and only until end is called) do without iptables-save where the
// process knows the tables already: for a family ApplyBatch wrote, the
// tables it saved right after its last write there (no restore since);
// for a family it did not write, those the read-back before the write
// saved (no restore since, at most readBackReuse old). A caller uses it
// around a read-back that immediately follows its own reconcile, and
// calls end after it, so that a permit the read-back did not take (it
// failed before the firewall's part) cannot reach a later one.
//
// The read-back after a write is there to see what the write left. A
// family the write did not touch holds what the read-back before it saw,
// unless someone else wrote it in between; such a write is as unseen as
// one right after the read-back, or one between the save after the write
// and the read-back: the next read-back without a permit (check, the
// daemon's drift check, the next apply) sees it.
func ReuseAfterWrite(t *netnsx.Target) (end func()) {
	afterWrite.mu.Lock()
	defer afterWrite.mu.Unlock()
	afterWrite.permits[t.Name] = true
	return func() { takeReusePermit(t.Name) }
}

// takeReusePermit consumes the permit ReuseAfterWrite gave.
func takeReusePermit(netns string) bool {
	afterWrite.mu.Lock()
	defer afterWrite.mu.Unlock()
	ok := afterWrite.permits[netns]
	delete(afterWrite.permits, netns)
	return ok
}

// withSaved returns backends where a family whose tables the process
// knows (see ReuseAfterWrite) answers save with them instead of saving.
func withSaved(backends map[items.Family]backend) map[items.Family]backend {
	out := make(map[items.Family]backend, len(backends))
	for fam, b := range backends {
		out[fam] = b
		eb, ok := b.(*execBackend)
		if !ok {
			continue
		}
		if s, ok := eb.key.saved(); ok {
			out[fam] = savedBackend{backend: b, saved: s}
		} else if s, ok := eb.key.lastReadBack(); ok {
			out[fam] = savedBackend{backend: b, saved: s}
		}
	}
	return out
}

// savedBackend answers save with tables saved before.
type savedBackend struct {
	backend
	saved savedTables
}

func (s savedBackend) save(context.Context) (map[string]*tableView, error) {
	return s.saved.tables, nil
}
