package reconciler

import dg "github.com/netagent/netagent/depgraph"

// seed queues the items that may need work: what changed in either graph
// since the last run over this scope, failed items (retried every time) and
// items with operations in flight or waiting for one. Without a usable mark
// (first run, another intended graph, a forgotten journal) it queues every
// item in scope.
func (u *run) seed() {
	intKey, curKey := u.markKeys()
	full := !u.seedFromJournal(u.intRoot, intKey, false) || !u.seedFromJournal(u.cur, curKey, true)
	if full || u.intended == nil {
		u.seedEverything()
	}
	for _, ref := range sortedKeys(u.rec.failed) {
		u.seedIfInScope(ref)
	}
	for _, ref := range sortedKeys(u.rec.async) {
		u.enqueue(ref)
	}
	u.enqueueAll(sortedKeys(u.rec.waiting))
	clear(u.rec.waiting)
}

// seedFromJournal queues the refs g changed since the mark. For the current
// state these are changes made by the caller (the reconciler's own changes
// are behind the mark), so their dependants must look again.
func (u *run) seedFromJournal(g *dg.Graph, key string, byCaller bool) bool {
	if g == nil {
		return true
	}
	mark, ok := u.rec.marks[key]
	if !ok {
		return false
	}
	refs, ok := g.ChangesSince(mark)
	if !ok {
		return false
	}
	for _, ref := range refs {
		if byCaller {
			u.changed[ref] = struct{}{}
			if g.ModifiedSince(ref, mark) {
				u.modified[ref] = struct{}{}
			}
			u.enqueue(ref)
			continue
		}
		u.seedIfInScope(ref)
	}
	return true
}

// seedEverything queues every item in scope, in the order the graphs
// were built where the graph still remembers it (cheaper than sorting).
func (u *run) seedEverything() {
	if u.intended != nil {
		u.seedGraph(u.intended)
	}
	if u.curScope != nil {
		u.seedGraph(u.curScope)
	}
}

func (u *run) seedGraph(g *dg.Graph) {
	refs, ok := g.Root().ChangesSince(0)
	if !ok {
		u.enqueueAll(g.Refs())
		return
	}
	for _, ref := range refs {
		if g.Contains(ref) {
			u.enqueue(ref)
		}
	}
}

func sortedKeys[V any](m map[dg.ItemRef]V) []dg.ItemRef {
	refs := make([]dg.ItemRef, 0, len(m))
	for ref := range m {
		refs = append(refs, ref)
	}
	sortRefs(refs)
	return refs
}

func (u *run) seedIfInScope(ref dg.ItemRef) {
	if u.inScope(ref) {
		u.enqueue(ref)
	}
}
