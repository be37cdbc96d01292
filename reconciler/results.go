package reconciler

import (
	"fmt"
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

// finish records the outcome of a synchronous operation in the current
// state and the log, and queues the items that may now move.
func (u *run) finish(p proposal, e OpLogEntry, end time.Time, err error) {
	e.End, e.Err = end, err
	u.logEntry(e)
	if err != nil {
		u.failed(p, end, err)
		return
	}
	delete(u.rec.failed, p.ref)
	delete(u.rec.blocked, p.ref)
	switch p.op {
	case OpCreate:
		u.curGraphFor(p.ref).PutWithState(p.new, dg.StateData{State: dg.StateCreated, LastOp: OpCreate, Since: end})
		u.queueDependants(p.ref)
	case OpModify:
		oldDeps := u.cur.Dependencies(p.ref)
		u.curGraphFor(p.ref).PutWithState(p.new, dg.StateData{State: dg.StateCreated, LastOp: OpModify, Since: end})
		u.queueManaged(oldDeps)
		u.queueDependants(p.ref)
	case OpDelete:
		oldDeps := u.cur.Dependencies(p.ref)
		u.cur.Delete(p.ref)
		delete(u.evict, p.ref)
		u.queueManaged(oldDeps)
		u.queueIntendedDependants(p.ref)
		if _, _, still := u.want(p.ref); still {
			u.enqueue(p.ref)
		}
	}
}

// failed records a failed operation. The item is not tried again in this
// run; every later Reconcile retries it.
func (u *run) failed(p proposal, at time.Time, err error) {
	u.errs = append(u.errs, fmt.Errorf("%s %s: %w", p.op, p.ref, err))
	u.failedNow[p.ref] = struct{}{}
	u.rec.failed[p.ref] = struct{}{}
	st := dg.StateData{State: dg.StateFailed, LastOp: p.op, LastErr: err, Since: at, FailedAt: at}
	switch p.op {
	case OpCreate:
		u.curGraphFor(p.ref).PutWithState(p.new, st)
	default:
		u.cur.SetState(p.ref, st)
	}
	if p.op == OpDelete {
		delete(u.evict, p.ref)
	}
	u.queueIntendedDependants(p.ref) // they now wait for a failed item
}

// started records an operation that continues in the background.
func (u *run) started(p proposal, e OpLogEntry, op *opCtx) {
	e.InProgress = true
	u.logEntry(e)
	u.rec.async[p.ref] = op
	u.queueIntendedDependants(p.ref) // they now wait for an item in transition
	st := dg.StateData{State: transitionState(p.op), LastOp: p.op, Since: e.Start, Async: op}
	if p.new != nil {
		u.curGraphFor(p.ref).PutWithState(p.new, st)
	} else {
		u.cur.SetState(p.ref, st)
	}
}

func transitionState(op Operation) dg.State {
	switch op {
	case OpCreate:
		return dg.StateCreating
	case OpModify:
		return dg.StateModifying
	}
	return dg.StateDeleting
}

// settleAsync finishes the bookkeeping of a background operation that has
// completed, or leaves it alone while it runs.
func (u *run) settleAsync(ref dg.ItemRef, op *opCtx) {
	done, err := op.result()
	if !done {
		return
	}
	delete(u.rec.async, ref)
	now := u.r.now()
	_, st, _ := u.cur.Lookup(ref)
	e := OpLogEntry{Ref: ref, Item: op.item, Op: op.op, Start: op.start, End: now, Err: err, PrevErr: st.LastErr}
	p := proposal{op: op.op, ref: ref}
	if op.op == OpDelete {
		p.old = op.item
	} else {
		p.new = op.item
	}
	u.finish(p, e, now, err)
	for w := range u.rec.waiting {
		u.enqueue(w)
	}
	clear(u.rec.waiting)
}

func (u *run) logEntry(e OpLogEntry) {
	u.log = append(u.log, e)
	if u.r.hook != nil {
		u.r.hook(e)
	}
}

// queueDependants queues the items (current and intended) that depend on
// ref: they may now be created, or must be withdrawn.
func (u *run) queueDependants(ref dg.ItemRef) {
	u.enqueueAll(u.cur.Dependants(ref))
	if u.intRoot != nil {
		u.enqueueAll(u.intRoot.Dependants(ref))
	}
}

// queueIntendedDependants queues the intended items that depend on ref, so
// that their "blocked" reasons follow ref's state.
func (u *run) queueIntendedDependants(ref dg.ItemRef) {
	if u.intRoot != nil {
		u.enqueueAll(u.intRoot.Dependants(ref))
	}
}

// queueManaged queues the managed items among deps: one of them may have
// been waiting for its dependant to leave.
func (u *run) queueManaged(deps []dg.Dependency) {
	for _, d := range deps {
		if it, _, ok := u.cur.Lookup(d.RequiredItem); ok && !it.External() {
			u.enqueue(d.RequiredItem)
		}
	}
}
