package reconciler

import (
	dg "github.com/netagent/netagent/depgraph"
)

// PlannedOp is an operation a Reconcile is about to run: the item's
// current value (Old, nil for a create) and the value it is to get (New,
// nil for a delete). Old is the item's before-image.
type PlannedOp struct {
	Op       Operation
	Ref      dg.ItemRef
	Old, New dg.Item
}

// WithBeforeChange makes Reconcile call f with the operations of each wave
// before it runs any of them: a place to record the before-image of every
// item a wave changes (a journal that makes a change undoable), batched so
// that one write covers the wave. When f fails, none of the wave's
// operations runs: each fails with f's error. f may be given an operation
// that is then not run (the wave's later operations are dropped when an
// earlier one evicted what they need): it is run in a later wave, and f
// sees it again. A dry run (Plan) never calls f.
func WithBeforeChange(f func(ops []PlannedOp) error) Option {
	return func(r *Reconciler) { r.before = f }
}

// beforeChange calls the WithBeforeChange hook with the wave's proposals;
// false when it failed, after failing each of them.
func (u *run) beforeChange(props *[3][]proposal) bool {
	if u.r.before == nil || u.dry {
		return true
	}
	n := len(props[0]) + len(props[1]) + len(props[2])
	if n == 0 {
		return true
	}
	ops := make([]PlannedOp, 0, n)
	for _, group := range props {
		for _, p := range group {
			ops = append(ops, PlannedOp{Op: p.op, Ref: p.ref(), Old: p.old(), New: p.new})
		}
	}
	err := u.r.before(ops)
	if err == nil {
		return true
	}
	now := u.r.now()
	for _, group := range props {
		for _, p := range group {
			u.finish(p, u.entry(p, now), now, err)
		}
	}
	return false
}
