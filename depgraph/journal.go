package depgraph

import "sort"

// journal records which items changed at which revision, so that a consumer
// that remembers the revision it last looked at can ask for just the items
// changed since (ChangesSince), in time proportional to the change.
type journal struct {
	entries []change
	floor   uint64 // revisions <= floor are no longer recorded
}

type change struct {
	rev  uint64
	node *Node
}

func (j *journal) add(rev uint64, n *Node, liveItems int) {
	j.entries = append(j.entries, change{rev, n})
	if len(j.entries) > 2*liveItems+1024 {
		j.compact(rev, liveItems)
	}
}

// compact keeps only the latest entry of every reference. If that is still
// much more than the live items (many deleted references), it forgets
// everything up to rev: consumers behind it must then look at everything.
func (j *journal) compact(rev uint64, liveItems int) {
	latest := make(map[ItemRef]uint64, len(j.entries)/2)
	for _, c := range j.entries {
		latest[c.node.Ref()] = c.rev
	}
	kept := j.entries[:0]
	for _, c := range j.entries {
		if latest[c.node.Ref()] == c.rev {
			kept = append(kept, c)
		}
	}
	clear(j.entries[len(kept):])
	j.entries = kept
	if len(j.entries) > 2*liveItems+512 {
		clear(j.entries)
		j.entries = j.entries[:0]
		j.floor = rev
	}
}

func (j *journal) since(rev uint64) ([]change, bool) {
	if rev < j.floor {
		return nil, false
	}
	i := sort.Search(len(j.entries), func(i int) bool { return j.entries[i].rev > rev })
	return j.entries[i:], true
}

// ChangesSince returns the references of items added, replaced by a
// different value, moved or deleted after revision rev (possibly with
// repeats), and false if the graph no longer remembers that far back.
func (g *Graph) ChangesSince(rev uint64) ([]ItemRef, bool) {
	changes, ok := g.r.journal.since(rev)
	if !ok {
		return nil, false
	}
	refs := make([]ItemRef, len(changes))
	for i, c := range changes {
		refs[i] = c.node.Ref()
	}
	return refs, true
}

// NodesChangedSince is ChangesSince returning nodes. A node may be Dead
// (its item deleted and nobody requiring it): use its Ref then.
func (g *Graph) NodesChangedSince(rev uint64) ([]*Node, bool) {
	changes, ok := g.r.journal.since(rev)
	if !ok {
		return nil, false
	}
	nodes := make([]*Node, len(changes))
	for i, c := range changes {
		nodes[i] = c.node
	}
	return nodes, true
}
