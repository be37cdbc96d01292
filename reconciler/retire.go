package reconciler

import (
	"slices"

	dg "github.com/netagent/netagent/depgraph"
)

// Make before break.
//
// An item that is no longer intended (retiring) is not deleted in the wave
// that finds it: it stays until the run has made every create and modify
// it can, so that a new object (a route with another metric, another
// address on the uplink) is in place before the one it replaces goes, and
// a dependant can move to the new object by a modify instead of being
// deleted with the old one. Then the retiring items are evicted, leaves
// first, as any other deletion.
//
// Two items the managed system cannot hold at once (sharing one of their
// dg.ConflictKeysOf) are the exception: before an item is created (or
// modified to that key), the retiring items conflicting with it are
// evicted, and it waits for their deletion.
//
// A retiring item is held back, not deleted, while an item of its type
// failed to be created or modified in the run: the new default route that
// the kernel refused must not take the old one with it. The held item
// stays (Status.Held says why) and the next run looks at it again; it goes
// once nothing of its type fails. An item held back may be no replacement
// of the failed one at all: keeping it a while longer is the safe side.
//
// Recreates, withdrawals (a dependency gone or its predicate false) and
// what depends on an item being deleted are not deferred: those items
// cannot stay.

// retire defers the deletion of c, which is no longer intended, to the
// end of the run.
func (u *run) retire(c *dg.Node) {
	if u.has(c, fRetiring) {
		return
	}
	u.set(c, fRetiring)
	u.retiring = append(u.retiring, c)
	for _, key := range dg.ConflictKeysOf(c.Item()) {
		if u.conflicts == nil {
			u.conflicts = make(map[string][]*dg.Node)
		}
		u.conflicts[key] = append(u.conflicts[key], c)
	}
}

// evictRetiring evicts the items whose deletion was deferred, once the
// waves have nothing more to create or modify, and reports whether it
// found any (the caller then runs more waves). While creates or modifies
// run in the background, the retiring items wait for them: they are
// looked at again when those finish.
func (u *run) evictRetiring() bool {
	list := u.retiring
	if len(list) == 0 {
		return false
	}
	u.retiring = nil
	wait := u.makingInBackground()
	found := false
	for _, c := range list {
		u.unset(c, fRetiring)
		if !c.Present() || u.has(c, fEvict) || u.wanted(c) {
			continue
		}
		if wait {
			u.rec.waiting[c.Ref()] = struct{}{}
			continue
		}
		if u.holdBack(c) {
			continue
		}
		u.enqueueAll(u.evictTree(c, nil))
		found = true
	}
	return found
}

// failedMake notes that the create or modify of ref failed in this run.
func (u *run) failedMake(ref dg.ItemRef) {
	if u.failedMakes == nil {
		u.failedMakes = make(map[string]dg.ItemRef)
	}
	if _, ok := u.failedMakes[ref.Type]; !ok {
		u.failedMakes[ref.Type] = ref
	}
}

// holdBack keeps the retiring item c when an item of its type failed to
// be made in this run, and reports whether it did. The next run looks at c
// again.
func (u *run) holdBack(c *dg.Node) bool {
	failed, ok := u.failedMakes[c.Ref().Type]
	if !ok {
		return false
	}
	u.rec.waiting[c.Ref()] = struct{}{}
	if u.held == nil {
		u.held = make(map[dg.ItemRef]string)
	}
	u.held[c.Ref()] = "kept until " + failed.String() + " and any other " + failed.Type +
		" that failed is made (make before break)"
	return true
}

// makingInBackground reports whether a create or a modify is in flight.
func (u *run) makingInBackground() bool {
	for _, op := range u.rec.async {
		if op.op != OpDelete {
			return true
		}
	}
	return false
}

// conflictPending reports whether item (c's intended value) must wait for
// retiring items it conflicts with to be deleted; it evicts them.
func (u *run) conflictPending(c *dg.Node, item dg.Item) bool {
	if len(u.conflicts) == 0 {
		return false
	}
	pending := false
	for _, key := range dg.ConflictKeysOf(item) {
		for _, r := range u.conflicts[key] {
			if r == c || !u.exists(r) {
				continue
			}
			pending = true
			u.waitForConflict(c, r)
		}
	}
	return pending
}

// waitForConflict makes c wait for the deletion of r.
func (u *run) waitForConflict(c, r *dg.Node) {
	if slices.Contains(u.conflictWaiters[r], c) {
		return // r shares more than one key with c
	}
	switch st := r.State(); {
	case u.has(r, fFailedNow):
		u.noteConflict(c, r, "failed: "+errString(st.LastErr))
		return
	case st.State.InTransition():
		u.noteConflict(c, r, st.State.String())
		return
	}
	if u.conflictWaiters == nil {
		u.conflictWaiters = make(map[*dg.Node][]*dg.Node)
	}
	u.conflictWaiters[r] = append(u.conflictWaiters[r], c)
	if !u.has(r, fEvict) {
		u.enqueueAll(u.evictTree(r, nil))
	}
}

// noteConflict records why c waits for r, and has the next run look at c
// again (the conflict is no edge of the graph that would bring it back).
func (u *run) noteConflict(c, r *dg.Node, why string) {
	u.rec.waiting[c.Ref()] = struct{}{}
	u.block(c.Ref(), "blocked: waiting for "+r.Ref().String()+" to be deleted (conflicts with it; "+why+")", r.Ref())
}

// carryConflictWaiters hands the items waiting for c's deletion, which
// continues in the background, to the next runs: the per-run list of
// waiters ends with this run, and the run that sees the delete done must
// look at them again.
func (u *run) carryConflictWaiters(c *dg.Node) {
	for _, w := range u.conflictWaiters[c] {
		u.rec.waiting[w.Ref()] = struct{}{}
	}
	delete(u.conflictWaiters, c)
}

// wakeConflictWaiters queues the items that waited for c's deletion.
func (u *run) wakeConflictWaiters(c *dg.Node) {
	if ws, ok := u.conflictWaiters[c]; ok {
		delete(u.conflictWaiters, c)
		u.enqueueAll(ws)
	}
}
