package reconciler

import (
	"encoding/json"
	"maps"
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

// Records is what a reconciler keeps about one current-state graph between
// calls: the items whose last operation failed (retried by every run), why
// intended items are blocked, the operations in flight, and how far the
// last run looked into each graph. The caller owns it, next to its current
// graph: it hands it to the Reconciler (WithRecords), reads per-item
// status from it (Failure, Block, InFlight) and can save and restore it
// (Save, RestoreRecords, or JSON).
//
// Records belong to one current-state graph at a time. Given another graph
// (a restored read-back, a nil current), a run forgets how far it had
// looked and looks at every item once; failures and blocked notes carry
// over, and a run updates them as it goes.
//
// The zero value is empty records, ready to use. Records are not safe for
// concurrent use: the goroutine that owns the current graph owns them.
type Records struct {
	// graph is the ID of the current-state graph the marks belong to.
	graph uint64
	// marks: the revision of a graph (intended or current) up to which the
	// reconciler has looked, per scope. See markKey.
	marks map[string]uint64
	// failed holds the items whose last operation failed (retried by every
	// Reconcile), with the count of consecutive failed operations.
	failed map[dg.ItemRef]Failure
	// async holds the operations in flight.
	async map[dg.ItemRef]*opCtx
	// waiting holds items the next run must look at again although nothing
	// changed them: they could not start because a related item was in
	// transition, they wait for a conflicting item's deletion, or they are
	// retiring items kept back (a create or modify in flight or failed).
	waiting map[dg.ItemRef]struct{}
	// blocked explains intended items that do not exist.
	blocked  map[dg.ItemRef]blockNote
	notifier *notifier
	// scratch holds the per-run marks of the current graph's nodes, by
	// node Index, stamped with the run's epoch: kept from run to run so
	// that a run neither allocates nor clears it.
	scratch []mark
	epoch   uint32
}

// mark is the per-run marks of one node (fQueued, ...); they mean nothing
// unless epoch is the run's.
type mark struct {
	epoch uint32
	flags uint32
}

// nextEpoch returns the epoch of a new run.
func (r *Records) nextEpoch() uint32 {
	r.epoch++
	if r.epoch == 0 { // wrapped: old stamps could match again
		clear(r.scratch)
		r.epoch = 1
	}
	return r.epoch
}

// Failure is the record of an item whose last operation failed.
type Failure struct {
	// Count is the number of operations on the item that failed in a row
	// (one per run at most); a successful operation forgets the record.
	Count int
	// At is when the last one failed.
	At time.Time
	// Op is the operation that failed last.
	Op Operation
}

// Block is why an intended item does not exist (or cannot change) now.
type Block struct {
	// Reason is human text: "blocked: waiting for link/eth0 (carrier up)".
	Reason string
	// On is the item waited for (which may itself be blocked, or failed,
	// or external).
	On dg.ItemRef
	// Since is when the run that first found the item blocked (in a row)
	// found it.
	Since time.Time
}

type blockNote struct {
	Block
	err error // set for items of a dependency cycle
}

// NewRecords returns empty records: the first run with them looks at every
// item.
func NewRecords() *Records {
	r := &Records{}
	r.init()
	return r
}

func (r *Records) init() {
	if r.marks != nil {
		return
	}
	r.marks = make(map[string]uint64)
	r.failed = make(map[dg.ItemRef]Failure)
	r.async = make(map[dg.ItemRef]*opCtx)
	r.waiting = make(map[dg.ItemRef]struct{})
	r.blocked = make(map[dg.ItemRef]blockNote)
	r.notifier = &notifier{}
}

// bind makes the records those of the current graph cur: records of
// another graph keep what they know of items but not their marks.
func (r *Records) bind(cur *dg.Graph) {
	r.init()
	if id := cur.ID(); r.graph != id {
		clear(r.marks)
		r.scratch = nil // by the Index of another graph's nodes
		r.graph = id
	}
}

// clone copies the records for a dry run (in-flight handles are shared).
func (r *Records) clone() *Records {
	r.init()
	c := NewRecords()
	c.graph = r.graph // scratch: a new one, the dry run's own
	maps.Copy(c.marks, r.marks)
	maps.Copy(c.failed, r.failed)
	maps.Copy(c.async, r.async)
	maps.Copy(c.waiting, r.waiting)
	maps.Copy(c.blocked, r.blocked)
	return c
}

// Failure returns the record of an item whose last operation failed.
func (r *Records) Failure(ref dg.ItemRef) (Failure, bool) {
	f, ok := r.failed[ref]
	return f, ok
}

// Failed returns the items whose last operation failed, in ref order.
func (r *Records) Failed() []dg.ItemRef { return sortedKeys(r.failed) }

// Block returns why an intended item is blocked, if it is.
func (r *Records) Block(ref dg.ItemRef) (Block, bool) {
	n, ok := r.blocked[ref]
	return n.Block, ok
}

// Blocked returns the blocked items, in ref order.
func (r *Records) Blocked() []dg.ItemRef { return sortedKeys(r.blocked) }

// NumBlocked returns how many items are blocked.
func (r *Records) NumBlocked() int { return len(r.blocked) }

// InFlight reports whether an operation on the item continues in the
// background.
func (r *Records) InFlight(ref dg.ItemRef) bool {
	_, ok := r.async[ref]
	return ok
}

// AnyInFlight reports whether any operation continues in the background.
func (r *Records) AnyInFlight() bool { return len(r.async) > 0 }

// InFlightRefs returns the items whose operation continues in the
// background, in ref order.
func (r *Records) InFlightRefs() []dg.ItemRef { return sortedKeys(r.async) }

// SavedRecords is the part of Records that outlives the process: failures
// and blocked notes. What is not saved, and why:
//   - operations in flight: their handles (goroutines, channels) die with
//     the process; after a restart the item is read back as it is.
//   - the marks (how far each graph was looked at) and the items waiting
//     to be looked at again: they refer to graph revisions of this
//     process; restored records make the next run look at every item.
//   - the errors of dependency cycles: every run finds cycles again.
type SavedRecords struct {
	Failed  []SavedFailure `json:"failed,omitempty"`
	Blocked []SavedBlock   `json:"blocked,omitempty"`
}

// SavedFailure is one saved Failure.
type SavedFailure struct {
	Type  string    `json:"type"`
	Name  string    `json:"name"`
	Op    string    `json:"op"`
	Count int       `json:"count"`
	At    time.Time `json:"at"`
}

// SavedBlock is one saved Block.
type SavedBlock struct {
	Type   string    `json:"type"`
	Name   string    `json:"name"`
	Reason string    `json:"reason"`
	OnType string    `json:"onType,omitempty"`
	OnName string    `json:"onName,omitempty"`
	Since  time.Time `json:"since"`
}

// Save returns what of the records survives a restart, in ref order.
func (r *Records) Save() SavedRecords {
	var s SavedRecords
	for _, ref := range r.Failed() {
		f := r.failed[ref]
		s.Failed = append(s.Failed, SavedFailure{Type: ref.Type, Name: ref.Name, Op: f.Op.String(), Count: f.Count, At: f.At})
	}
	for _, ref := range r.Blocked() {
		b := r.blocked[ref]
		s.Blocked = append(s.Blocked, SavedBlock{Type: ref.Type, Name: ref.Name, Reason: b.Reason,
			OnType: b.On.Type, OnName: b.On.Name, Since: b.Since})
	}
	return s
}

// RestoreRecords returns records holding what s saved. The first run with
// them looks at every item.
func RestoreRecords(s SavedRecords) *Records {
	r := NewRecords()
	for _, f := range s.Failed {
		r.failed[dg.ItemRef{Type: f.Type, Name: f.Name}] = Failure{Count: f.Count, At: f.At, Op: parseOp(f.Op)}
	}
	for _, b := range s.Blocked {
		r.blocked[dg.ItemRef{Type: b.Type, Name: b.Name}] = blockNote{Block: Block{Reason: b.Reason,
			On: dg.ItemRef{Type: b.OnType, Name: b.OnName}, Since: b.Since}}
	}
	return r
}

func parseOp(s string) Operation {
	for _, op := range []Operation{OpCreate, OpModify, OpDelete} {
		if op.String() == s {
			return op
		}
	}
	return dg.OpNone
}

// MarshalJSON encodes what Save returns.
func (r *Records) MarshalJSON() ([]byte, error) { return json.Marshal(r.Save()) }

// UnmarshalJSON replaces r with what RestoreRecords makes of the data.
func (r *Records) UnmarshalJSON(data []byte) error {
	var s SavedRecords
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	*r = *RestoreRecords(s)
	return nil
}

// noteFailure records a failed operation on ref.
func (r *Records) noteFailure(ref dg.ItemRef, op Operation, at time.Time) {
	f := r.failed[ref]
	f.Count++
	f.At, f.Op = at, op
	r.failed[ref] = f
}

// noteBlocked records why ref is blocked, keeping the time it was first
// found blocked.
func (r *Records) noteBlocked(ref dg.ItemRef, n blockNote, now time.Time) {
	if old, ok := r.blocked[ref]; ok {
		n.Since = old.Since
	} else {
		n.Since = now
	}
	r.blocked[ref] = n
}
