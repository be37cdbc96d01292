package reconciler

import (
	dg "github.com/netagent/netagent/depgraph"
)

// records is what the reconciler keeps about a current-state graph between
// calls. It is stored in the graph itself (depgraph meta), so any new
// Reconciler continues where the last one stopped.
type records struct {
	// marks: the revision of a graph (intended or current) up to which the
	// reconciler has looked, per scope. See markKey.
	marks map[string]uint64
	// failed holds the items whose last operation failed (retried by every
	// Reconcile).
	failed map[dg.ItemRef]struct{}
	// async holds the operations in flight.
	async map[dg.ItemRef]*opCtx
	// waiting holds items the next run must look at again although nothing
	// changed them: they could not start because a related item was in
	// transition, they wait for a conflicting item's deletion, or they are
	// retiring items kept back (a create or modify in flight or failed).
	waiting map[dg.ItemRef]struct{}
	// blocked explains intended items that do not exist.
	blocked  map[dg.ItemRef]blockNote
	notifier *notifier
}

type blockNote struct {
	reason string
	on     dg.ItemRef // the dependency waited for
	err    error      // set for items of a dependency cycle
}

const recordsKey = "netagent.dev/reconciler"

func recordsOf(g *dg.Graph) *records {
	if rec, ok := g.Meta(recordsKey).(*records); ok {
		return rec
	}
	rec := &records{
		marks:    make(map[string]uint64),
		failed:   make(map[dg.ItemRef]struct{}),
		async:    make(map[dg.ItemRef]*opCtx),
		waiting:  make(map[dg.ItemRef]struct{}),
		blocked:  make(map[dg.ItemRef]blockNote),
		notifier: &notifier{},
	}
	g.SetMeta(recordsKey, rec)
	return rec
}

// clone copies the records for a dry run (in-flight handles are shared).
func (r *records) clone() *records {
	c := &records{
		marks:    make(map[string]uint64, len(r.marks)),
		failed:   make(map[dg.ItemRef]struct{}, len(r.failed)),
		async:    make(map[dg.ItemRef]*opCtx, len(r.async)),
		waiting:  make(map[dg.ItemRef]struct{}, len(r.waiting)),
		blocked:  make(map[dg.ItemRef]blockNote, len(r.blocked)),
		notifier: &notifier{},
	}
	for k, v := range r.marks {
		c.marks[k] = v
	}
	for k := range r.failed {
		c.failed[k] = struct{}{}
	}
	for k, v := range r.async {
		c.async[k] = v
	}
	for k := range r.waiting {
		c.waiting[k] = struct{}{}
	}
	for k, v := range r.blocked {
		c.blocked[k] = v
	}
	return c
}
