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
	rev uint64
	ref ItemRef
}

func (j *journal) add(rev uint64, ref ItemRef, liveItems int) {
	j.entries = append(j.entries, change{rev, ref})
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
		latest[c.ref] = c.rev
	}
	kept := j.entries[:0]
	for _, c := range j.entries {
		if latest[c.ref] == c.rev {
			kept = append(kept, c)
		}
	}
	j.entries = kept
	if len(j.entries) > 2*liveItems+512 {
		j.entries = j.entries[:0]
		j.floor = rev
	}
}

// ChangesSince returns the references of items added, replaced by a
// different value, moved or deleted after revision rev (possibly with
// repeats), and false if the graph no longer remembers that far back.
func (g *Graph) ChangesSince(rev uint64) ([]ItemRef, bool) {
	j := &g.r.journal
	if rev < j.floor {
		return nil, false
	}
	i := sort.Search(len(j.entries), func(i int) bool { return j.entries[i].rev > rev })
	refs := make([]ItemRef, 0, len(j.entries)-i)
	for _, c := range j.entries[i:] {
		refs = append(refs, c.ref)
	}
	return refs, true
}
