package reconciler

import (
	"slices"

	dg "github.com/netagent/netagent/depgraph"
)

func sortRefs(refs []dg.ItemRef) { slices.SortFunc(refs, dg.ItemRef.Compare) }

// propose is the second half of a wave: for every item it decides the one
// operation that is ready now, if any. Operations found in the same wave
// are mutually independent, so they can run in any order or as a batch.
func (u *run) propose(wave []dg.ItemRef) []proposal {
	out := u.props[:0]
	for _, ref := range wave {
		if p, ok := u.decide(ref); ok {
			out = append(out, p)
		}
	}
	u.props = out
	return out
}

func (u *run) decide(ref dg.ItemRef) (proposal, bool) {
	if op, ok := u.rec.async[ref]; ok {
		u.settleAsync(ref, op)
		return proposal{}, false
	}
	if _, failed := u.failedNow[ref]; failed {
		return proposal{}, false
	}
	c, st, cok := u.cur.Lookup(ref)
	w, deps, wok := u.want(ref)
	if cok && c.External() || wok && w.External() {
		return proposal{}, false
	}
	if !cok || st.State == dg.StateFailed && st.LastOp != dg.OpModify {
		return u.decideAbsent(ref, c, cok, w, deps, wok)
	}
	if _, ok := u.evict[ref]; ok {
		return u.decideDelete(ref, c, wok)
	}
	if !wok {
		return proposal{}, false
	}
	return u.decideModify(ref, c, st, w, deps)
}

// decideAbsent handles an item with no instance: never created, or whose
// create or delete failed.
func (u *run) decideAbsent(ref dg.ItemRef, c dg.Item, cok bool, w dg.Item, deps []dg.Dependency, wok bool) (proposal, bool) {
	if !wok {
		if cok && !u.exists(ref) {
			// The record of a failed create of an item no longer wanted.
			u.cur.Delete(ref)
			delete(u.rec.failed, ref)
			return proposal{}, false
		}
		if cok { // a failed delete: try again
			return u.decideDelete(ref, c, false)
		}
		delete(u.rec.blocked, ref)
		return proposal{}, false
	}
	if !u.ready(ref, deps) {
		return proposal{}, false
	}
	_, re := u.recreating[ref]
	return proposal{op: OpCreate, ref: ref, new: w, recreate: re}, true
}

func (u *run) decideDelete(ref dg.ItemRef, c dg.Item, stillWanted bool) (proposal, bool) {
	if u.dependantsRemain(ref) {
		return proposal{}, false // they leave first and queue ref again
	}
	if u.transitionNearby(ref) {
		return proposal{}, false
	}
	_, re := u.recreating[ref]
	return proposal{op: OpDelete, ref: ref, old: c, recreate: re || stillWanted}, true
}

// dependantsRemain reports whether current items still depend on ref,
// making sure each of them is on its way out: evicted, or about to be
// modified so that it no longer depends on ref.
func (u *run) dependantsRemain(ref dg.ItemRef) bool {
	remain := false
	for _, d := range u.cur.Dependants(ref) {
		if !u.exists(d) {
			continue
		}
		remain = true
		if _, going := u.evict[d]; going || u.canModifyAway(d, ref) {
			u.enqueue(d)
			continue
		}
		if _, _, still := u.want(d); still {
			u.recreating[d] = struct{}{}
		}
		u.enqueueAll(u.evictTree(d, nil))
	}
	return remain
}

func (u *run) decideModify(ref dg.ItemRef, c dg.Item, st dg.StateData, w dg.Item, deps []dg.Dependency) (proposal, bool) {
	changed := !w.Equal(c)
	if !changed && st.State != dg.StateFailed {
		return proposal{}, false
	}
	if !u.ready(ref, deps) || changed && u.closesCycle(ref, deps) {
		u.stalled = append(u.stalled, ref)
		return proposal{}, false
	}
	if changed && u.evictRecreateOnModify(ref) {
		return proposal{}, false
	}
	return proposal{op: OpModify, ref: ref, old: c, new: w}, true
}

// evictRecreateOnModify evicts the dependants that want to be recreated
// when ref is modified, and reports whether any still exists.
func (u *run) evictRecreateOnModify(ref dg.ItemRef) bool {
	waiting := false
	for _, d := range u.cur.Dependants(ref) {
		if !u.exists(d) || !u.recreateWhenModified(d, ref) {
			continue
		}
		waiting = true
		if _, ok := u.evict[d]; !ok {
			u.recreating[d] = struct{}{}
			for _, e := range u.evictTree(d, nil) {
				u.enqueue(e)
			}
		}
	}
	return waiting
}

// ready reports whether an item with these intended dependencies can be
// created or modified now. When not, the item is noted as blocked; the
// reason is worked out once, at the end of the run (explainBlocked).
func (u *run) ready(ref dg.ItemRef, deps []dg.Dependency) bool {
	if _, blocked := u.unsatisfied(deps); blocked {
		u.blockedNow = append(u.blockedNow, ref)
		return false
	}
	return !u.transitionNearby(ref)
}

// unsatisfied returns the first dependency that is not met. A dependency is
// met when the required item exists in the current state, is created (not
// failed, not in transition), is not about to be deleted or changed, and
// satisfies the predicate.
func (u *run) unsatisfied(deps []dg.Dependency) (dg.Dependency, bool) {
	for _, dep := range deps {
		if u.depProblem(dep) != depMet {
			return dep, true
		}
	}
	return dg.Dependency{}, false
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

func (u *run) depProblem(dep dg.Dependency) depStatus {
	req := dep.RequiredItem
	it, st, ok := u.cur.Lookup(req)
	switch {
	case !ok:
		if _, _, wanted := u.want(req); !wanted {
			return depNotIntended
		}
		return depMissing
	case st.State != dg.StateCreated:
		return depNotCreated
	}
	if _, going := u.evict[req]; going {
		return depGoing
	}
	if !it.External() {
		if w, _, ok := u.want(req); ok && !w.Equal(it) {
			return depChanging
		}
	}
	if dep.MustSatisfy != nil && !dep.MustSatisfy(it) {
		return depPredicate
	}
	return depMet
}

// closesCycle reports whether giving ref these new dependencies would
// close a dependency cycle among existing items: a cycle can never be
// created from nothing, so it must not form through a modify either.
func (u *run) closesCycle(ref dg.ItemRef, deps []dg.Dependency) bool {
	old := u.cur.Dependencies(ref)
	var seen map[dg.ItemRef]struct{}
	for _, d := range deps {
		if hasDep(old, d.RequiredItem) {
			continue
		}
		if seen == nil {
			seen = make(map[dg.ItemRef]struct{})
		}
		if u.reaches(d.RequiredItem, ref, seen) {
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
func (u *run) reaches(from, target dg.ItemRef, seen map[dg.ItemRef]struct{}) bool {
	stack := []dg.ItemRef{from}
	for len(stack) > 0 {
		r := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if r == target {
			return true
		}
		if _, done := seen[r]; done {
			continue
		}
		seen[r] = struct{}{}
		for _, d := range u.cur.Dependencies(r) {
			stack = append(stack, d.RequiredItem)
		}
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
	for _, ref := range stalled {
		c, st, ok := u.cur.Lookup(ref)
		w, deps, wok := u.want(ref)
		if !ok || !wok || st.State != dg.StateCreated || w.Equal(c) {
			continue
		}
		if _, blocked := u.unsatisfied(deps); !blocked && !u.closesCycle(ref, deps) {
			continue
		}
		if _, going := u.evict[ref]; going {
			continue
		}
		u.recreating[ref] = struct{}{}
		u.enqueueAll(u.evictTree(ref, nil))
		found = true
	}
	return found
}

// explainBlocked records, for every item found blocked in this run that is
// still absent or unchanged, why it waits.
func (u *run) explainBlocked() {
	for _, ref := range u.blockedNow {
		w, deps, wok := u.want(ref)
		_, st, cok := u.cur.Lookup(ref)
		if !wok || cok && st.State == dg.StateCreated && w.Equal(mustItem(u.cur, ref)) {
			delete(u.rec.blocked, ref)
			continue
		}
		dep, blocked := u.unsatisfied(deps)
		if !blocked {
			continue
		}
		u.rec.blocked[ref] = blockNote{reason: u.reason(dep), on: dep.RequiredItem}
	}
}

func mustItem(g *dg.Graph, ref dg.ItemRef) dg.Item {
	it, _, _ := g.Lookup(ref)
	return it
}

func (u *run) reason(dep dg.Dependency) string {
	req := dep.RequiredItem.String()
	switch u.depProblem(dep) {
	case depNotIntended:
		return "blocked: waiting for " + req + " (not in the intended state)"
	case depNotCreated:
		_, st, _ := u.cur.Lookup(dep.RequiredItem)
		if st.State == dg.StateFailed {
			return "blocked: waiting for " + req + " (failed: " + errString(st.LastErr) + ")"
		}
		return "blocked: waiting for " + req + " (" + st.State.String() + ")"
	case depGoing:
		return "blocked: waiting for " + req + " (being deleted)"
	case depChanging:
		return "blocked: waiting for " + req + " (being changed)"
	case depPredicate:
		return "blocked: waiting for " + dep.String()
	}
	return "blocked: waiting for " + req
}

func errString(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}

// transitionNearby reports whether an item with a dependency path to or from
// ref has an operation in flight; ref must then wait, so that only
// independent items are ever in transition together.
func (u *run) transitionNearby(ref dg.ItemRef) bool {
	if len(u.rec.async) == 0 {
		return false
	}
	if on, found := u.findTransition(ref); found {
		u.rec.waiting[ref] = struct{}{}
		u.rec.blocked[ref] = blockNote{reason: "blocked: waiting for " + on.String() + " (in transition)", on: on}
		return true
	}
	return false
}

// findTransition walks the dependencies and the dependants of ref
// (transitively, in both graphs) looking for an item in transition.
func (u *run) findTransition(ref dg.ItemRef) (dg.ItemRef, bool) {
	if on, ok := u.walkFor(ref, u.upstream); ok {
		return on, true
	}
	return u.walkFor(ref, u.downstream)
}

func (u *run) walkFor(start dg.ItemRef, next func(dg.ItemRef, func(dg.ItemRef))) (dg.ItemRef, bool) {
	seen := map[dg.ItemRef]struct{}{start: {}}
	stack := []dg.ItemRef{start}
	for len(stack) > 0 {
		ref := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, busy := u.rec.async[ref]; busy && ref != start {
			return ref, true
		}
		next(ref, func(n dg.ItemRef) {
			if _, ok := seen[n]; !ok {
				seen[n] = struct{}{}
				stack = append(stack, n)
			}
		})
	}
	return dg.ItemRef{}, false
}

func (u *run) upstream(ref dg.ItemRef, visit func(dg.ItemRef)) {
	for _, d := range u.cur.Dependencies(ref) {
		visit(d.RequiredItem)
	}
	if u.intRoot != nil {
		for _, d := range u.intRoot.Dependencies(ref) {
			visit(d.RequiredItem)
		}
	}
}

func (u *run) downstream(ref dg.ItemRef, visit func(dg.ItemRef)) {
	for _, d := range u.cur.Dependants(ref) {
		visit(d)
	}
	if u.intRoot != nil {
		for _, d := range u.intRoot.Dependants(ref) {
			visit(d)
		}
	}
}
