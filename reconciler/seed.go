package reconciler

import (
	"slices"

	dg "github.com/netagent/netagent/depgraph"
)

// seed queues the items that may need work: what changed in either graph
// since the last run over this scope, failed items (retried every time) and
// items with operations in flight or waiting for one. Without a usable mark
// (first run, another intended graph, a forgotten journal) it queues every
// item in scope.
func (u *run) seed() {
	intKey, curKey := u.markKeys()
	full := !u.seedIntended(intKey) || !u.seedCurrent(curKey)
	if full || u.intended == nil {
		u.seedEverything()
	}
	for _, ref := range sortedKeys(u.rec.failed) {
		if u.inScopeRef(ref) {
			u.enqueue(u.cur.NodeFor(ref))
		}
	}
	for _, ref := range sortedKeys(u.rec.async) {
		u.enqueue(u.cur.NodeFor(ref))
	}
	for _, ref := range sortedKeys(u.rec.waiting) {
		u.enqueue(u.cur.NodeFor(ref))
	}
	clear(u.rec.waiting)
}

func (u *run) seedIntended(key string) bool {
	if u.intRoot == nil {
		return true
	}
	mark, ok := u.rec.marks[key]
	if !ok {
		return false
	}
	nodes, ok := u.intRoot.NodesChangedSince(mark)
	if !ok {
		return false
	}
	for _, i := range nodes {
		c := u.asCur(i)
		if u.inScope(c, u.intNode(c)) {
			u.enqueue(c)
		}
	}
	return true
}

// seedCurrent queues what the caller changed in the current state (the
// reconciler's own changes are behind the mark): their dependants must
// look again.
func (u *run) seedCurrent(key string) bool {
	mark, ok := u.rec.marks[key]
	if !ok {
		return false
	}
	nodes, ok := u.cur.NodesChangedSince(mark)
	if !ok {
		return false
	}
	for _, c := range nodes {
		if c.Dead() {
			c = u.cur.NodeFor(c.Ref())
		}
		u.set(c, fChanged)
		if u.cur.ModifiedSince(c.Ref(), mark) {
			u.set(c, fModified)
		}
		u.enqueue(c)
	}
	return true
}

// seedEverything queues every item in scope: the intended ones in the
// order the graph was built where it still remembers it (cheaper than
// sorting), then the current ones in reference order (the current graph's
// journal does not hold the reconciler's own writes).
func (u *run) seedEverything() {
	var curNodes []*dg.Node
	if u.curScope != nil {
		curNodes = u.curScope.Nodes() // before the intended items add empty nodes
	}
	if u.intended != nil {
		n := u.intended.Len() + len(curNodes)
		u.queue = slices.Grow(u.queue, n)
		u.cur.Reserve(u.intended.Len())
		if need := u.cur.Len() + u.intended.Len(); need > len(u.scratch) {
			u.growScratch(need) // the marks of about every node at once
		}
		u.seedIntendedGraph(u.intended)
	}
	u.enqueueAll(curNodes)
	for _, c := range curNodes {
		if c.External() {
			u.logHint--
		}
	}
}

func (u *run) seedIntendedGraph(g *dg.Graph) {
	nodes, ok := g.Root().NodesChangedSince(0)
	if !ok {
		for _, ref := range g.Refs() {
			u.enqueue(u.asCur(g.Node(ref)))
		}
		return
	}
	for _, n := range nodes {
		if !n.Dead() && g.Holds(n) {
			u.enqueue(u.asCur(n))
			if n.External() {
				u.logHint--
			}
		}
	}
}

func sortedKeys[V any](m map[dg.ItemRef]V) []dg.ItemRef {
	if len(m) == 0 {
		return nil
	}
	refs := make([]dg.ItemRef, 0, len(m))
	for ref := range m {
		refs = append(refs, ref)
	}
	slices.SortFunc(refs, dg.ItemRef.Compare)
	return refs
}
