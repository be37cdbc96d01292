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
	c := p.node
	if len(u.rec.failed) > 0 {
		delete(u.rec.failed, p.ref())
	}
	u.forgetBlocked(c)
	switch p.op {
	case OpCreate:
		u.put(c, p.new, dg.StateData{State: dg.StateCreated, LastOp: OpCreate, Since: end})
		u.queueDependants(c)
	case OpModify:
		oldReq := c.Required()
		u.put(c, p.new, dg.StateData{State: dg.StateCreated, LastOp: OpModify, Since: end})
		u.queueManaged(oldReq)
		u.queueDependants(c)
	case OpDelete:
		oldReq := c.Required()
		u.wakeConflictWaiters(c)
		u.cur.DeleteNode(c)
		u.unset(c, fEvict)
		u.queueManaged(oldReq)
		u.queueIntendedDependants(c)
		if u.wanted(c) {
			u.enqueue(c)
		}
	}
}

// put records item as c's current value, in the subgraph where the
// intended state has it; an item taken from the intended state brings its
// already resolved dependencies along.
func (u *run) put(c *dg.Node, item dg.Item, st dg.StateData) {
	i := u.intNode(c)
	if i != nil && i.Item() == item {
		u.graphFor(i).PutFrom(c, i, st)
		return
	}
	u.graphFor(i).PutAt(c, item, st)
}

// failed records a failed operation. The item is not tried again in this
// run; every later Reconcile retries it.
func (u *run) failed(p proposal, at time.Time, err error) {
	c := p.node
	u.errs = append(u.errs, fmt.Errorf("%s %s: %w", p.op, p.ref(), err))
	u.set(c, fFailedNow)
	u.rec.noteFailure(p.ref(), p.op, at)
	if p.op != OpDelete {
		u.failedMake(p.ref())
	}
	st := dg.StateData{State: dg.StateFailed, LastOp: p.op, LastErr: err, Since: at}
	switch {
	case p.op == OpCreate:
		u.put(c, p.new, st)
	case c.Present():
		c.SetState(st)
	}
	if p.op == OpDelete {
		u.unset(c, fEvict)
		u.wakeConflictWaiters(c) // they now wait for a failed delete
	}
	u.queueIntendedDependants(c) // they now wait for a failed item
}

// started records an operation that continues in the background.
func (u *run) started(p proposal, e OpLogEntry, op *opCtx) {
	e.InProgress = true
	u.logEntry(e)
	u.rec.async[p.ref()] = op
	c := p.node
	st := dg.StateData{State: transitionState(p.op), LastOp: p.op, Since: e.Start}
	if p.new != nil {
		u.put(c, p.new, st)
	} else {
		c.SetState(st)
	}
	u.queueIntendedDependants(c) // they now wait for an item in transition
	if p.op == OpDelete {
		u.carryConflictWaiters(c)
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
func (u *run) settleAsync(c *dg.Node, op *opCtx) {
	done, err := op.result()
	if !done {
		return
	}
	delete(u.rec.async, c.Ref())
	now := u.r.now()
	e := OpLogEntry{Ref: c.Ref(), Item: op.item, Op: op.op, Start: op.start, End: now, Err: err, PrevErr: c.State().LastErr}
	p := proposal{op: op.op, node: c}
	if op.op != OpDelete {
		p.new = op.item
	}
	u.finish(p, e, now, err)
	for _, ref := range sortedKeys(u.rec.waiting) {
		u.enqueue(u.cur.NodeFor(ref))
	}
	clear(u.rec.waiting)
}

func (u *run) logEntry(e OpLogEntry) {
	u.reserveLog(1)
	u.log = append(u.log, e)
	if u.r.hook != nil {
		u.r.hook(e)
	}
}

// reserveLog makes room in the log for n more entries. The log is made at
// the first operation (a run that changes nothing makes none) and grows
// when it is full, by doubling, but from below logHint not past it
// (unless n needs more); a group of operations that outgrows the log
// (256 or more) takes it to logHint at once, as the run is then about
// that big. A batch reserves its entries only once the configurator is
// done with it, so that the log's array of one entry per operation
// (13 MB at 100k routes) is not made before the batch's own arrays are
// garbage.
func (u *run) reserveLog(n int) {
	need := len(u.log) + n
	if need <= cap(u.log) {
		return
	}
	size := 2 * cap(u.log)
	if cap(u.log) < u.logHint {
		size = min(size, u.logHint)
		if n >= 256 && n > cap(u.log) {
			size = u.logHint
		}
	}
	grown := make(OperationLog, len(u.log), max(size, need, 8))
	copy(grown, u.log)
	u.log = grown
}

// queueDependants queues the items (current and intended) that depend on
// c: they may now be created, or must be withdrawn.
func (u *run) queueDependants(c *dg.Node) {
	u.enqueueAll(c.Dependants())
	u.queueIntendedDependants(c)
}

// queueIntendedDependants queues the intended items that depend on c, so
// that they move (or their "blocked" reasons follow c's state).
func (u *run) queueIntendedDependants(c *dg.Node) {
	if i := u.intNode(c); i != nil {
		for _, d := range i.Dependants() {
			u.enqueue(u.asCur(d))
		}
	}
}

// queueManaged queues the managed items among reqs: one of them may have
// been waiting for its dependant to leave.
func (u *run) queueManaged(reqs []*dg.Node) {
	for _, req := range reqs {
		if req.Present() && !req.External() {
			u.enqueue(req)
		}
	}
}
