package reconciler

import (
	"context"
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
)

// run is one Reconcile call: the graphs, the scope and the work queue.
type run struct {
	r        *Reconciler
	ctx      context.Context
	dry      bool
	cur      *dg.Graph // root of the current state
	curScope *dg.Graph // the part of the current state in scope (may be nil)
	intended *dg.Graph // the part of the intended state in scope (may be nil)
	intRoot  *dg.Graph
	scope    string
	rec      *records

	queue  []dg.ItemRef
	queued map[dg.ItemRef]struct{}
	// changed holds refs the caller changed in the current state since the
	// last look; modified those among them replaced in place.
	changed  map[dg.ItemRef]struct{}
	modified map[dg.ItemRef]struct{}
	// evict holds items whose current instance must be deleted in this run;
	// recreating those of them that will be created again.
	evict      map[dg.ItemRef]struct{}
	recreating map[dg.ItemRef]struct{}
	// failedNow holds items that failed in this run (not retried again).
	failedNow map[dg.ItemRef]struct{}
	// blockedNow holds items found blocked in this run.
	blockedNow []dg.ItemRef
	// stalled holds items whose change waited for a dependency.
	stalled []dg.ItemRef

	subgraphs map[string]*dg.Graph
	log       OperationLog
	errs      []error
	spare     *opCtx
	props     []proposal
}

func newRun(r *Reconciler, ctx context.Context, current, intended *dg.Graph, dry bool) *run {
	if current == nil {
		name := "current state"
		if intended != nil {
			name = intended.Root().Name()
		}
		current = dg.New(name)
	}
	u := &run{
		r: r, ctx: ctx, dry: dry,
		cur:        current.Root(),
		intended:   intended,
		queued:     make(map[dg.ItemRef]struct{}),
		changed:    make(map[dg.ItemRef]struct{}),
		modified:   make(map[dg.ItemRef]struct{}),
		evict:      make(map[dg.ItemRef]struct{}),
		recreating: make(map[dg.ItemRef]struct{}),
		failedNow:  make(map[dg.ItemRef]struct{}),
		subgraphs:  make(map[string]*dg.Graph),
	}
	u.rec = recordsOf(u.cur)
	u.setScope(current)
	return u
}

// setScope works out which part of the graphs this run reconciles.
func (u *run) setScope(current *dg.Graph) {
	switch {
	case u.intended != nil:
		u.intRoot = u.intended.Root()
		u.scope = scopeKey(u.intended)
		if only, ok := singleItem(u.intended); ok {
			u.curScope = u.cur.ItemAsSubGraph(only)
		} else if p := u.intended.Path(); p == "" {
			u.curScope = u.cur
		} else {
			u.curScope = u.cur.SubGraph(p)
		}
	default:
		u.curScope = current
		u.scope = scopeKey(current)
	}
}

func scopeKey(g *dg.Graph) string {
	if only, ok := singleItem(g); ok {
		return g.Path() + "#" + only.String()
	}
	return g.Path()
}

// singleItem tells whether g is an item view (ItemAsSubGraph).
func singleItem(g *dg.Graph) (dg.ItemRef, bool) { return g.SingleItem() }

func (u *run) inScope(ref dg.ItemRef) bool {
	if u.intended != nil && u.intended.Contains(ref) {
		return true
	}
	return u.curScope != nil && u.curScope.Contains(ref)
}

// want returns the intended value of ref and its dependencies, if it should
// exist. Items out of scope keep their intended value from the whole tree,
// or else their current value: a run never deletes what is outside its
// scope.
func (u *run) want(ref dg.ItemRef) (dg.Item, []dg.Dependency, bool) {
	if u.intended != nil {
		if it, deps, ok := u.intended.LookupDeps(ref); ok {
			return it, deps, true
		}
	}
	if u.inScope(ref) {
		return nil, nil, false
	}
	if u.intRoot != nil {
		if it, deps, ok := u.intRoot.LookupDeps(ref); ok {
			return it, deps, true
		}
	}
	return u.cur.LookupDeps(ref)
}

func (u *run) enqueue(ref dg.ItemRef) {
	if _, ok := u.queued[ref]; ok {
		return
	}
	u.queued[ref] = struct{}{}
	u.queue = append(u.queue, ref)
}

func (u *run) enqueueAll(refs []dg.ItemRef) {
	for _, ref := range refs {
		u.enqueue(ref)
	}
}

// takeWave returns the queued refs in the order they were queued and
// empties the queue. That order only depends on the order in which the
// graphs were built and changed, never on map iteration, so the same
// inputs give the same operation log.
func (u *run) takeWave() []dg.ItemRef {
	wave := u.queue
	u.queue = nil
	clear(u.queued)
	return wave
}

// curGraphFor returns the subgraph of the current state where ref belongs:
// the same path as in the intended state.
func (u *run) curGraphFor(ref dg.ItemRef) *dg.Graph {
	path := ""
	if u.intRoot != nil {
		path, _ = u.intRoot.ScopeOf(ref)
	}
	if path == "" {
		return u.cur
	}
	g, ok := u.subgraphs[path]
	if !ok {
		g = u.cur.EditSubGraph(path)
		u.subgraphs[path] = g
	}
	return g
}

func (u *run) markKeys() (intKey, curKey string) {
	if u.intRoot != nil {
		intKey = fmt.Sprintf("intended:%d:%s", u.intRoot.ID(), u.scope)
	}
	return intKey, "current:" + u.scope
}

func (u *run) saveMarks() {
	intKey, curKey := u.markKeys()
	if intKey != "" {
		u.rec.marks[intKey] = u.intRoot.Rev()
	}
	u.rec.marks[curKey] = u.cur.Rev()
}
