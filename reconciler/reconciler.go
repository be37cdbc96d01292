package reconciler

import (
	"context"
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

// Reconciler drives a current-state graph towards an intended one. What it
// needs between calls is in the current-state graph and in the Records the
// caller owns (WithRecords); a Reconciler made without them makes its own,
// used by every call through it (Records returns them). A new Reconciler
// with new records looks at every item once.
type Reconciler struct {
	reg     Registry
	now     func() time.Time
	hook    func(OpLogEntry)
	predict func(op Operation, item dg.Item) error
	before  func(ops []PlannedOp) error
	rec     *Records
}

// Option configures a Reconciler.
type Option func(*Reconciler)

// WithClock replaces time.Now (for tests).
func WithClock(now func() time.Time) Option { return func(r *Reconciler) { r.now = now } }

// WithOpHook calls f after every operation (and when an asynchronous one
// starts), from the caller's goroutine: a place to log each kernel change.
func WithOpHook(f func(OpLogEntry)) Option { return func(r *Reconciler) { r.hook = f } }

// WithPrediction tells a dry run (Plan) which operations would fail: f
// returns the error an operation on item would fail with now, or nil. The
// caller knows what the managed system holds that the configurator would
// refuse (an object someone else owns where the item goes); the dry run
// then plans what a real run does after such a failure: the item is
// failed with that error and what depends on it is blocked. Reconcile
// never calls f.
func WithPrediction(f func(op Operation, item dg.Item) error) Option {
	return func(r *Reconciler) { r.predict = f }
}

// WithRecords makes the Reconciler keep its records in rec, which the
// caller owns: it holds them next to its current-state graph, reads status
// from them and may save them (Records.Save). A dry run (Plan) works on a
// copy and leaves rec as it is.
func WithRecords(rec *Records) Option { return func(r *Reconciler) { r.rec = rec } }

// New returns a Reconciler that uses the configurators of reg.
func New(reg Registry, opts ...Option) *Reconciler {
	r := &Reconciler{reg: reg, now: time.Now}
	for _, o := range opts {
		o(r)
	}
	if r.rec == nil {
		r.rec = NewRecords()
	}
	return r
}

// Records returns the records the Reconciler keeps (WithRecords, or its
// own).
func (r *Reconciler) Records() *Records { return r.rec }

// Reconcile runs the operations that take current towards intended and
// returns what it did. current may be nil (nothing exists yet); intended may
// be nil (delete everything current holds in scope). When intended is a
// subgraph (or an item view), only that part is reconciled: items of the
// current state outside it are deleted only if they were put there.
//
// Reconcile calls the configurators from the caller's goroutine and starts
// no goroutines of its own; operations a configurator continues in the
// background are reported in the Status.
func (r *Reconciler) Reconcile(ctx context.Context, current, intended *dg.Graph) Status {
	return r.reconcile(ctx, r.rec, current, intended, false)
}

// Plan is a dry run of Reconcile: the same algorithm, with no configurator
// operation called (NeedsRecreate still is). The current graph is not
// changed; the Status holds the exact operations a Reconcile would run now,
// in order, and in NewCurrentState the state it would leave behind. An
// operation that WithPrediction says fails is logged with its error and
// fails as in a real run.
func (r *Reconciler) Plan(ctx context.Context, current, intended *dg.Graph) Status {
	rec := r.rec.clone()
	if current != nil {
		root := current.Root()
		clone := root.Clone()
		if rec.graph == root.ID() {
			rec.graph = clone.ID() // same revisions and journal: the marks hold
		}
		if !current.IsRoot() {
			current = clone.SubGraph(current.Path())
			if current == nil {
				current = clone
			}
		} else {
			current = clone
		}
	}
	return r.reconcile(ctx, rec, current, intended, true)
}

func (r *Reconciler) reconcile(ctx context.Context, rec *Records, current, intended *dg.Graph, dry bool) Status {
	run := newRun(r, ctx, rec, current, intended, dry)
	var st Status
	run.cur.WithoutJournal(func() { st = run.reconcile() })
	// The nodes' cached counterparts would keep either graph alive once
	// the caller replaces it (a fresh read-back, a new intent).
	run.cur.Root().ForgetPeers()
	if intended != nil {
		intended.Root().ForgetPeers()
	}
	return st
}

// reconcile runs the waves. The reconciler's own writes to the current
// state are not journaled: the journal tells the next run only what the
// caller changed.
func (u *run) reconcile() Status {
	run := u
	run.cur.Hold()
	defer run.cur.Release()
	run.seed()
	run.logHint += len(run.queue)
	for {
		for len(run.queue) > 0 {
			wave := run.takeWave()
			wave = run.markEvictions(wave)
			props := run.propose(wave)
			run.endWave(wave)
			run.execute(props)
		}
		if run.evictRetiring() {
			continue // make before break: what is no longer wanted goes last
		}
		if !run.withdrawStalled() {
			break
		}
	}
	run.explainBlocked()
	run.detectCycles()
	run.saveMarks()
	return run.status()
}
