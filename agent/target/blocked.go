package target

import dg "github.com/netagent/netagent/depgraph"

// linkWaits tells, for blocked items, whether each waits for something a
// link event can bring: an external item (a link's presence, carrier or
// state), directly or through other blocked items. An item blocked only
// behind a failed item or a dependency cycle waits for nothing that a link
// event changes, so Apply does not wait for it.
type linkWaits struct {
	intended, cur *dg.Graph
	blocked       map[dg.ItemRef]string
	memo          map[dg.ItemRef]verdict
}

type verdict uint8

const (
	unknown verdict = iota
	visiting
	waits
	waitsNot
)

func newLinkWaits(intended, cur *dg.Graph, blocked map[dg.ItemRef]string) *linkWaits {
	if cur == nil {
		cur = dg.New("current")
	}
	return &linkWaits{intended: intended, cur: cur, blocked: blocked, memo: map[dg.ItemRef]verdict{}}
}

// of reports whether the blocked item ref waits for an external item.
func (w *linkWaits) of(ref dg.ItemRef) bool {
	switch w.memo[ref] {
	case waits:
		return true
	case waitsNot, visiting: // visiting: a cycle, which no link event breaks
		return false
	}
	w.memo[ref] = visiting
	v := waitsNot
	if w.anyDepWaits(ref) {
		v = waits
	}
	w.memo[ref] = v
	return v == waits
}

func (w *linkWaits) anyDepWaits(ref dg.ItemRef) bool {
	_, deps, ok := w.intended.LookupDeps(ref)
	if !ok {
		return false
	}
	for _, d := range deps {
		if w.depWaits(d) {
			return true
		}
	}
	return false
}

// depWaits reports whether the unmet dependency d is an external item, or
// a blocked item that itself waits for one.
func (w *linkWaits) depWaits(d dg.Dependency) bool {
	req := d.RequiredItem
	have, st, exists := w.cur.Lookup(req)
	want, wanted := w.intended.Get(req)
	external := exists && have.External() || wanted && want.External() || !wanted && !exists
	if external {
		return !met(d, have, st, exists)
	}
	if _, blocked := w.blocked[req]; blocked {
		return w.of(req)
	}
	return false
}

// met reports whether the dependency holds for the required item's
// current value.
func met(d dg.Dependency, have dg.Item, st dg.StateData, exists bool) bool {
	if !exists || st.State == dg.StateFailed || st.State.InTransition() {
		return false
	}
	return d.MustSatisfy == nil || d.MustSatisfy(have)
}
