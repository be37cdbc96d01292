package reconciler

import (
	dg "github.com/netagent/netagent/depgraph"
)

// proposal is an operation found ready in a wave.
type proposal struct {
	op       Operation
	ref      dg.ItemRef
	old, new dg.Item
	recreate bool
}

// markEvictions is the first half of a wave: it finds the current items
// that must go (not intended any more, to be recreated, or whose
// dependencies broke) and marks them and everything that depends on them
// for deletion. Dependants join the wave, so the leaves are deleted first.
func (u *run) markEvictions(wave []dg.ItemRef) []dg.ItemRef {
	n := len(wave)
	for i := 0; i < len(wave); i++ {
		ref := wave[i]
		if _, ok := u.changed[ref]; ok {
			wave = u.reactToCallerChange(ref, wave)
		}
		if u.isExternal(ref) {
			continue
		}
		if must, recreate := u.mustDelete(ref); must {
			if recreate {
				u.recreating[ref] = struct{}{}
			}
			wave = u.evictTree(ref, wave)
		}
	}
	if len(wave) > n {
		wave = dedup(wave)
	}
	return wave
}

// reactToCallerChange brings the dependants of an item the caller changed
// into the wave, and evicts those that asked to be recreated when it is
// modified.
func (u *run) reactToCallerChange(ref dg.ItemRef, wave []dg.ItemRef) []dg.ItemRef {
	delete(u.changed, ref)
	_, modified := u.modified[ref]
	for _, d := range u.cur.Dependants(ref) {
		wave = append(wave, d)
		if modified && u.recreateWhenModified(d, ref) && u.exists(d) {
			u.recreating[d] = struct{}{}
			wave = u.evictTree(d, wave)
		}
	}
	if u.intRoot != nil {
		wave = append(wave, u.intRoot.Dependants(ref)...)
	}
	return wave
}

func (u *run) recreateWhenModified(dependant, required dg.ItemRef) bool {
	for _, dep := range u.cur.Dependencies(dependant) {
		if dep.RequiredItem == required && dep.RecreateWhenModified {
			return true
		}
	}
	return false
}

func (u *run) isExternal(ref dg.ItemRef) bool {
	if it, _, ok := u.cur.Lookup(ref); ok {
		return it.External()
	}
	if it, _, ok := u.want(ref); ok {
		return it.External()
	}
	return false
}

// exists reports whether the current state holds a real instance of ref:
// present and not the record of a failed create.
func (u *run) exists(ref dg.ItemRef) bool {
	_, st, ok := u.cur.Lookup(ref)
	return ok && !(st.State == dg.StateFailed && st.LastOp == dg.OpCreate)
}

// mustDelete reports whether the current instance of ref has to be deleted
// for its own reasons, and whether it is a recreate (it is still intended).
func (u *run) mustDelete(ref dg.ItemRef) (must, recreate bool) {
	c, st, ok := u.cur.Lookup(ref)
	if !ok || st.State.InTransition() || st.State == dg.StateFailed && st.LastOp == dg.OpCreate {
		return false, false
	}
	w, _, wok := u.want(ref)
	switch {
	case !wok:
		return true, false
	case st.State == dg.StateFailed && st.LastOp == dg.OpDelete:
		return false, false
	case u.depsBroken(ref):
		return true, true
	case !w.Equal(c) && u.needsRecreate(c, w):
		return true, true
	}
	return false, false
}

// depsBroken reports whether a dependency of the current instance is gone
// or its predicate no longer holds: the instance must be withdrawn.
func (u *run) depsBroken(ref dg.ItemRef) bool {
	for _, dep := range u.cur.Dependencies(ref) {
		it, _, ok := u.cur.Lookup(dep.RequiredItem)
		if !ok || !u.exists(dep.RequiredItem) {
			return true
		}
		if dep.MustSatisfy != nil && !dep.MustSatisfy(it) {
			return true
		}
	}
	return false
}

func (u *run) needsRecreate(old, new dg.Item) bool {
	if c := u.r.reg.Configurator(new); c != nil {
		return c.NeedsRecreate(old, new)
	}
	return false
}

// evictTree marks ref for deletion with, transitively, every current item
// depending on it, except dependants whose intended value no longer depends
// on ref and can be modified now: those are modified first instead.
func (u *run) evictTree(ref dg.ItemRef, wave []dg.ItemRef) []dg.ItemRef {
	if _, done := u.evict[ref]; done {
		return wave
	}
	u.evict[ref] = struct{}{}
	wave = append(wave, ref)
	for _, d := range u.cur.Dependants(ref) {
		if !u.exists(d) {
			continue
		}
		if u.canModifyAway(d, ref) {
			wave = append(wave, d)
			continue
		}
		if _, _, still := u.want(d); still {
			u.recreating[d] = struct{}{}
		}
		wave = u.evictTree(d, wave)
	}
	return wave
}

// canModifyAway reports whether dependant d can drop its dependency on ref
// by a modify that is ready now.
func (u *run) canModifyAway(d, ref dg.ItemRef) bool {
	w, deps, ok := u.want(d)
	if !ok {
		return false
	}
	c, _, _ := u.cur.Lookup(d)
	if w.Equal(c) || u.needsRecreate(c, w) {
		return false
	}
	for _, dep := range deps {
		if dep.RequiredItem == ref {
			return false
		}
	}
	_, blocked := u.unsatisfied(deps)
	return !blocked
}

// dedup drops repeated refs, keeping the first occurrence of each.
func dedup(refs []dg.ItemRef) []dg.ItemRef {
	seen := make(map[dg.ItemRef]struct{}, len(refs))
	out := refs[:0]
	for _, r := range refs {
		if _, dup := seen[r]; !dup {
			seen[r] = struct{}{}
			out = append(out, r)
		}
	}
	return out
}
