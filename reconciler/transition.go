package reconciler

import dg "github.com/netagent/netagent/depgraph"

// transitionNearby reports whether an item with a dependency path to or from
// ref has an operation in flight; ref must then wait, so that only
// independent items are ever in transition together. It costs nothing
// while no operation is in flight.
func (u *run) transitionNearby(ref dg.ItemRef) bool {
	if len(u.rec.async) == 0 {
		return false
	}
	if on, found := u.findTransition(ref); found {
		u.rec.waiting[ref] = struct{}{}
		u.block(ref, "blocked: waiting for "+on.String()+" (in transition)", on)
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
