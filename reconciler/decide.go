package reconciler

import (
	dg "github.com/netagent/netagent/depgraph"
)

// proposal is an operation found ready in a wave.
type proposal struct {
	node     *dg.Node // the current-state node (of the item's reference)
	new      dg.Item  // nil for a delete; the old value is node's (see old)
	evictSeq uint32   // run.evictSeq when it was proposed
	op       Operation
	recreate bool // (op and recreate next to evictSeq: a proposal is 32 bytes)
}

func (p proposal) ref() dg.ItemRef { return p.node.Ref() }

// old is the value a delete or modify replaces (nil for a create): the
// node's item, which nothing but p's own operation changes between its
// proposal and its run (a node is in a wave once). Not keeping a copy
// saves a sixth of a wave's proposals (1.6 MB at 100k creates).
func (p proposal) old() dg.Item {
	if p.op == OpCreate {
		return nil
	}
	return p.node.Item()
}

// equal reports whether a and b describe the same state. An item is equal
// to itself without asking it (see dg.Item).
func equal(a, b dg.Item) bool { return a == b || a.Equal(b) }

// markEvictions is the first half of a wave: it finds the current items
// that must go now (to be recreated, or whose dependencies broke) and
// marks them and everything that depends on them for deletion; items not
// intended any more are retired instead, deleted at the end of the run
// (retire.go). Dependants join the wave, so the leaves are deleted first.
func (u *run) markEvictions(wave []*dg.Node) []*dg.Node {
	for i := 0; i < len(wave); i++ {
		c := wave[i]
		if u.has(c, fChanged) {
			wave = u.reactToCallerChange(c, wave)
		}
		if !c.Present() || c.External() {
			continue // nothing to delete (mustDelete), or not ours
		}
		must, recreate := u.mustDelete(c)
		switch {
		case must && !recreate:
			u.retire(c) // make before break: deleted at the end
		case must:
			u.set(c, fRecreating)
			wave = u.addAllToWave(u.evictTree(c, nil), wave)
		}
	}
	return wave
}

// addToWave appends c to the wave unless it is in it already.
func (u *run) addToWave(c *dg.Node, wave []*dg.Node) []*dg.Node {
	if u.has(c, fInWave) {
		return wave
	}
	u.set(c, fInWave)
	return append(wave, c)
}

func (u *run) addAllToWave(nodes, wave []*dg.Node) []*dg.Node {
	for _, n := range nodes {
		wave = u.addToWave(n, wave)
	}
	return wave
}

// reactToCallerChange brings the dependants of an item the caller changed
// into the wave, and evicts those that asked to be recreated when it is
// modified.
func (u *run) reactToCallerChange(c *dg.Node, wave []*dg.Node) []*dg.Node {
	u.unset(c, fChanged)
	modified := u.has(c, fModified)
	for _, d := range c.Dependants() {
		wave = u.addToWave(d, wave)
		if modified && u.recreateWhenModified(d, c) && u.exists(d) {
			u.set(d, fRecreating)
			wave = u.addAllToWave(u.evictTree(d, nil), wave)
		}
	}
	if i := u.intNode(c); i != nil {
		for _, d := range i.Dependants() {
			wave = u.addToWave(u.asCur(d), wave)
		}
	}
	return wave
}

func (u *run) recreateWhenModified(d, c *dg.Node) bool {
	for k, req := range d.Required() {
		if req == c && d.Dependencies()[k].RecreateWhenModified {
			return true
		}
	}
	return false
}

// isExternalOf reports whether the item of c, whose intended node is i (or
// nil), is external: observed, never changed.
func (u *run) isExternalOf(c, i *dg.Node) bool {
	if c.Present() {
		return c.External()
	}
	return i != nil && i.External()
}

// exists reports whether the current state holds a real instance: present
// and not the record of a failed create.
func (u *run) exists(c *dg.Node) bool {
	if !c.Present() {
		return false
	}
	st := c.State()
	return !(st.State == dg.StateFailed && st.LastOp == dg.OpCreate)
}

// mustDelete reports whether the current instance of c has to be deleted
// for its own reasons, and whether it is a recreate (it is still intended).
func (u *run) mustDelete(c *dg.Node) (must, recreate bool) {
	if !c.Present() {
		return false, false
	}
	st := c.State()
	if st.State.InTransition() || st.State == dg.StateFailed && st.LastOp == dg.OpCreate {
		return false, false
	}
	w := u.want(c)
	switch {
	case !w.ok:
		return true, false
	case st.State == dg.StateFailed && st.LastOp == dg.OpDelete:
		return false, false
	case u.depsBroken(c):
		return true, true
	case !equal(w.item, c.Item()) && u.needsRecreate(c.Item(), w.item):
		return true, true
	}
	return false, false
}

// depsBroken reports whether a dependency of the current instance is gone
// or its predicate no longer holds: the instance must be withdrawn.
func (u *run) depsBroken(c *dg.Node) bool {
	deps := c.Dependencies()
	for k, req := range c.Required() {
		if !u.exists(req) {
			return true
		}
		if f := deps[k].MustSatisfy; f != nil && !f(req.Item()) {
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

// evictTree marks c for deletion with, transitively, every current item
// depending on it, except dependants whose intended value no longer depends
// on c and can be modified now: those are modified first instead. It
// appends to out the nodes that must be looked at (possibly repeated).
func (u *run) evictTree(c *dg.Node, out []*dg.Node) []*dg.Node {
	if u.has(c, fEvict) {
		return out
	}
	u.set(c, fEvict)
	u.evictSeq++
	out = append(out, c)
	for _, d := range c.Dependants() {
		if !u.exists(d) {
			continue
		}
		if u.canModifyAway(d, c) {
			out = append(out, d)
			continue
		}
		if u.wanted(d) {
			u.set(d, fRecreating)
		}
		out = u.evictTree(d, out)
	}
	return out
}

// canModifyAway reports whether dependant d can drop its dependency on c
// by a modify that is ready now.
func (u *run) canModifyAway(d, c *dg.Node) bool {
	w := u.want(d)
	if !w.ok || equal(w.item, d.Item()) || u.needsRecreate(d.Item(), w.item) {
		return false
	}
	for _, dep := range w.deps {
		if dep.RequiredItem == c.Ref() {
			return false
		}
	}
	return !u.blocked(&w)
}
