package reconciler

import (
	dg "github.com/netagent/netagent/depgraph"
)

// propose is the second half of a wave: for every item it decides the one
// operation that is ready now, if any, and files it by kind (deletes,
// modifies, creates). Operations found in the same wave are mutually
// independent, so they can run in any order or as a batch.
func (u *run) propose(wave []*dg.Node) *[3][]proposal {
	for k := range u.props {
		u.props[k] = u.props[k][:0]
	}
	for j, c := range wave {
		if p, ok := u.decide(c); ok {
			p.evictSeq = u.evictSeq
			k := opRank(p.op)
			u.props[k] = append(roomForUpTo(u.props[k], len(wave)-j), p)
		}
	}
	return &u.props
}

func (u *run) decide(c *dg.Node) (proposal, bool) {
	if len(u.rec.async) > 0 {
		if op, ok := u.rec.async[c.Ref()]; ok {
			u.settleAsync(c, op)
			return proposal{}, false
		}
	}
	i := u.intNode(c)
	if u.has(c, fFailedNow) || u.isExternalOf(c, i) {
		return proposal{}, false
	}
	st := c.State()
	if st.State.InTransition() && c.Present() {
		// No handle: treat the operation as failed, and do it again now.
		st = dg.StateData{State: dg.StateFailed, LastOp: st.LastOp, LastErr: ErrOperationLost, Since: st.Since}
		c.SetState(st)
	}
	w := u.wantOf(c, i)
	if !c.Present() || st.State == dg.StateFailed && st.LastOp != dg.OpModify {
		return u.decideAbsent(c, w)
	}
	if u.has(c, fEvict) {
		return u.decideDelete(c, w.ok)
	}
	if !w.ok {
		return proposal{}, false
	}
	return u.decideModify(c, st, w)
}

// decideAbsent handles an item with no instance: never created, or whose
// create or delete failed.
func (u *run) decideAbsent(c *dg.Node, w target) (proposal, bool) {
	if !w.ok {
		switch {
		case c.Present() && !u.exists(c):
			// The record of a failed create of an item no longer wanted.
			u.cur.DeleteNode(c)
			delete(u.rec.failed, c.Ref())
		case c.Present() && u.has(c, fRetiring) && !u.has(c, fEvict):
			// a failed delete, tried again at the end
		case c.Present(): // a failed delete: try again
			return u.decideDelete(c, false)
		}
		u.forgetBlocked(c)
		return proposal{}, false
	}
	if !u.ready(c, w) || u.conflictPending(c, w.item) {
		return proposal{}, false
	}
	return proposal{op: OpCreate, node: c, new: w.item, recreate: u.has(c, fRecreating)}, true
}

func (u *run) decideDelete(c *dg.Node, stillWanted bool) (proposal, bool) {
	if u.dependantsRemain(c) {
		return proposal{}, false // they leave first and queue c again
	}
	if u.transitionNearby(c.Ref()) {
		return proposal{}, false
	}
	re := u.has(c, fRecreating) || stillWanted
	return proposal{op: OpDelete, node: c, recreate: re}, true
}

// dependantsRemain reports whether current items still depend on c,
// making sure each of them is on its way out: evicted, or about to be
// modified so that it no longer depends on c.
func (u *run) dependantsRemain(c *dg.Node) bool {
	remain := false
	for _, d := range c.Dependants() {
		if !u.exists(d) {
			continue
		}
		remain = true
		if u.has(d, fEvict) || u.canModifyAway(d, c) {
			u.enqueue(d)
			continue
		}
		if u.wanted(d) {
			u.set(d, fRecreating)
		}
		u.enqueueAll(u.evictTree(d, nil))
	}
	return remain
}

func (u *run) decideModify(c *dg.Node, st dg.StateData, w target) (proposal, bool) {
	changed := !equal(w.item, c.Item())
	if !changed && st.State != dg.StateFailed {
		return proposal{}, false
	}
	if !u.ready(c, w) || changed && u.closesCycle(c, w) {
		u.stall(c)
		return proposal{}, false
	}
	if changed && (u.evictRecreateOnModify(c) || u.conflictPending(c, w.item)) {
		return proposal{}, false
	}
	return proposal{op: OpModify, node: c, new: w.item}, true
}

func (u *run) stall(c *dg.Node) {
	if !u.has(c, fStalled) {
		u.set(c, fStalled)
		u.stalled = append(u.stalled, c)
	}
}

// evictRecreateOnModify evicts the dependants that want to be recreated
// when c is modified, and reports whether any still exists.
func (u *run) evictRecreateOnModify(c *dg.Node) bool {
	waiting := false
	for _, d := range c.Dependants() {
		if !u.exists(d) || !u.recreateWhenModified(d, c) {
			continue
		}
		waiting = true
		if !u.has(d, fEvict) {
			u.set(d, fRecreating)
			u.enqueueAll(u.evictTree(d, nil))
		}
	}
	return waiting
}

// ready reports whether the intended value w of c can be created or
// modified now. When not, c is noted as blocked; the reason is worked out
// once, at the end of the run (explainBlocked).
func (u *run) ready(c *dg.Node, w target) bool {
	if u.blocked(&w) {
		if !u.has(c, fBlocked) {
			u.set(c, fBlocked)
			u.blockedNow = append(roomForOne(u.blockedNow), c)
		}
		return false
	}
	return !u.transitionNearby(c.Ref())
}

// unsatisfied returns the first dependency of w that is not met, with its
// node. A dependency is met when the required item exists in the current
// state, is created (not failed, not in transition), is not about to be
// deleted or changed, and satisfies the predicate.
func (u *run) unsatisfied(w *target) (dg.Dependency, *dg.Node, bool) {
	if k := u.firstUnmet(w.deps, w.req); k >= 0 {
		return w.deps[k], w.req[k], true
	}
	return dg.Dependency{}, nil, false
}

// blocked reports whether a dependency of w is not met (see unsatisfied).
func (u *run) blocked(w *target) bool { return u.firstUnmet(w.deps, w.req) >= 0 }

// firstUnmet returns the index of the first dependency not met, or -1.
// It looks at the dependencies in place: a Dependency is 64 bytes.
func (u *run) firstUnmet(deps []dg.Dependency, req []*dg.Node) int {
	for k := range deps {
		if u.depProblem(&deps[k], req[k]) != depMet {
			return k
		}
	}
	return -1
}

type depStatus int

const (
	depMet depStatus = iota
	depMissing
	depNotIntended
	depNotCreated
	depGoing
	depChanging
	depPredicate
)

func (u *run) depProblem(dep *dg.Dependency, req *dg.Node) depStatus {
	rc := u.asCur(req)
	if !rc.Present() {
		if !u.wanted(rc) {
			return depNotIntended
		}
		return depMissing
	}
	if rc.State().State != dg.StateCreated {
		return depNotCreated
	}
	if u.has(rc, fEvict) {
		return depGoing
	}
	it := rc.Item()
	if !rc.External() {
		if w, ok := u.wantedItem(rc); ok && !equal(w, it) {
			return depChanging
		}
	}
	if dep.MustSatisfy != nil && !dep.MustSatisfy(it) {
		return depPredicate
	}
	return depMet
}

// closesCycle reports whether giving c the dependencies of w would close a
// dependency cycle among existing items: a cycle can never be created from
// nothing, so it must not form through a modify either.
func (u *run) closesCycle(c *dg.Node, w target) bool {
	var seen map[*dg.Node]struct{}
	for k, dep := range w.deps {
		if hasDep(c.Dependencies(), dep.RequiredItem) {
			continue
		}
		if seen == nil {
			seen = make(map[*dg.Node]struct{})
		}
		if u.reaches(u.asCur(w.req[k]), c, seen) {
			return true
		}
	}
	return false
}

func hasDep(deps []dg.Dependency, ref dg.ItemRef) bool {
	for _, d := range deps {
		if d.RequiredItem == ref {
			return true
		}
	}
	return false
}

// reaches reports whether from depends, transitively in the current state,
// on target.
func (u *run) reaches(from, target *dg.Node, seen map[*dg.Node]struct{}) bool {
	stack := []*dg.Node{from}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == target {
			return true
		}
		if _, done := seen[n]; done {
			continue
		}
		seen[n] = struct{}{}
		stack = append(stack, n.Required()...)
	}
	return false
}

// withdrawStalled deletes the items whose new value could not be applied
// because its dependencies are not met once everything else is done: an
// item exists only in a version whose dependencies hold. It reports whether
// it found work (the caller then runs more waves).
func (u *run) withdrawStalled() bool {
	stalled := u.stalled
	u.stalled = nil
	found := false
	for _, c := range stalled {
		u.unset(c, fStalled)
		if !c.Present() || c.State().State != dg.StateCreated || u.has(c, fEvict) {
			continue
		}
		w := u.want(c)
		if !w.ok || equal(w.item, c.Item()) {
			continue
		}
		if !u.blocked(&w) && !u.closesCycle(c, w) {
			continue
		}
		u.set(c, fRecreating)
		u.enqueueAll(u.evictTree(c, nil))
		found = true
	}
	return found
}

func (u *run) forgetBlocked(c *dg.Node) {
	if len(u.rec.blocked) > 0 {
		delete(u.rec.blocked, c.Ref())
	}
}

// explainBlocked records, for every item found blocked in this run that is
// still not as intended, why it waits.
func (u *run) explainBlocked() {
	for _, c := range u.blockedNow {
		u.unset(c, fBlocked)
		w := u.want(c)
		if !w.ok || c.Present() && c.State().State == dg.StateCreated && equal(w.item, c.Item()) {
			u.forgetBlocked(c)
			continue
		}
		dep, req, blocked := u.unsatisfied(&w)
		if !blocked {
			continue
		}
		u.block(c.Ref(), u.reason(dep, req), dep.RequiredItem)
	}
}

// block records why ref is blocked (since the start of this run if it was
// not already).
func (u *run) block(ref dg.ItemRef, reason string, on dg.ItemRef) {
	u.rec.noteBlocked(ref, blockNote{Block: Block{Reason: reason, On: on}}, u.start)
}

func (u *run) reason(dep dg.Dependency, req *dg.Node) string {
	name := dep.RequiredItem.String()
	switch u.depProblem(&dep, req) {
	case depNotIntended:
		return "blocked: waiting for " + name + " (not in the intended state)"
	case depNotCreated:
		st := u.asCur(req).State()
		if st.State == dg.StateFailed {
			return "blocked: waiting for " + name + " (failed: " + errString(st.LastErr) + ")"
		}
		return "blocked: waiting for " + name + " (" + st.State.String() + ")"
	case depGoing:
		return "blocked: waiting for " + name + " (being deleted)"
	case depChanging:
		return "blocked: waiting for " + name + " (being changed)"
	case depPredicate:
		return "blocked: waiting for " + dep.String()
	}
	return "blocked: waiting for " + name
}

func errString(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}
