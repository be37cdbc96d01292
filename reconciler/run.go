package reconciler

import (
	"context"
	"fmt"
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

// run is one Reconcile call: the graphs, the scope and the work queue.
//
// Items are handled through the nodes of the current graph (created empty
// for intended items that do not exist yet), which link to their intended
// counterparts, dependencies and dependants, so a run follows pointers
// instead of looking references up. Per-run marks (queued, evicted, ...)
// live in the caller's Records, in a slice by node Index stamped with the
// run's epoch.
type run struct {
	r        *Reconciler
	ctx      context.Context
	cur      *dg.Graph // root of the current state (held during the run)
	curScope *dg.Graph // the part of the current state in scope (may be nil)
	intended *dg.Graph // the part of the intended state in scope (may be nil)
	intRoot  *dg.Graph
	scope    string
	rec      *Records
	epoch    uint32    // stamps the run's marks (fQueued, ...) in scratch
	dry      bool      // (next to epoch: the struct fits in 448 bytes)
	scratch  []mark    // rec.scratch: the marks by node Index
	start    time.Time // when the run started

	queue      []*dg.Node
	blockedNow []*dg.Node // found blocked in this run
	stalled    []*dg.Node // a change waited for a dependency
	subgraphs  map[string]*dg.Graph
	log        OperationLog
	// logHint is about the most operations the run looks like running
	// (seedEverything subtracts the external items it queued; reconcile
	// adds the length of the queue): the log does not grow past it by
	// doubling (see reserveLog).
	logHint    int
	errs       []error
	spare      *opCtx
	props      [3][]proposal // a wave's deletes, modifies, creates (reused)
	spareQueue []*dg.Node    // the last wave's array, reused for the next queue
	grouping   *grouping     // see groupByType (made by the first)

	evictSeq        uint32                  // evictions so far (see stillReady; at most one per node and operation)
	retiring        []*dg.Node              // no longer intended: deleted at the end (retire.go)
	conflicts       map[string][]*dg.Node   // retiring items by conflict key
	conflictWaiters map[*dg.Node][]*dg.Node // items waiting for a conflicting item's delete
	failedMakes     map[string]dg.ItemRef   // by type: an item whose create or modify failed in this run
	held            map[dg.ItemRef]string   // retiring items held back, and why (retire.go)
}

// Per-run marks on current-state nodes.
const (
	fQueued     uint32 = 1 << iota // in the queue for the next wave
	fInWave                        // in the wave being processed
	fChanged                       // the caller changed it since the last run
	fModified                      // ... by replacing its value in place
	fEvict                         // its current instance must be deleted
	fRecreating                    // deleted to be created again
	fFailedNow                     // failed in this run: not retried in it
	fBlocked                       // in blockedNow
	fStalled                       // in stalled
	fRetiring                      // in retiring
)

func (u *run) has(n *dg.Node, f uint32) bool {
	i := n.Index()
	return i < len(u.scratch) && u.scratch[i].epoch == u.epoch && u.scratch[i].flags&f != 0
}

func (u *run) set(n *dg.Node, f uint32) {
	i := n.Index()
	if i >= len(u.scratch) {
		u.growScratch(i + 1)
	}
	m := &u.scratch[i]
	if m.epoch != u.epoch {
		*m = mark{epoch: u.epoch}
	}
	m.flags |= f
}

func (u *run) unset(n *dg.Node, f uint32) {
	if i := n.Index(); i < len(u.scratch) && u.scratch[i].epoch == u.epoch {
		u.scratch[i].flags &^= f
	}
}

// growScratch makes room for the marks of n nodes (new entries hold no
// run's epoch), in the records too.
func (u *run) growScratch(n int) {
	s := u.scratch
	if n <= cap(s) {
		s = s[:cap(s)]
	} else {
		s = append(s[:cap(s)], make([]mark, max(n, 2*cap(s), 64)-cap(s))...)
	}
	u.scratch, u.rec.scratch = s, s
}

func newRun(r *Reconciler, ctx context.Context, rec *Records, current, intended *dg.Graph, dry bool) *run {
	if current == nil {
		name := "current state"
		if intended != nil {
			name = intended.Root().Name()
		}
		current = dg.New(name)
	}
	u := &run{
		r: r, ctx: ctx, dry: dry,
		cur:       current.Root(),
		intended:  intended,
		rec:       rec,
		start:     r.now(),
		subgraphs: make(map[string]*dg.Graph),
	}
	rec.bind(u.cur)
	u.epoch, u.scratch = rec.nextEpoch(), rec.scratch
	u.setScope(current)
	u.ctx = withIntended(ctx, u.intRoot)
	return u
}

// setScope works out which part of the graphs this run reconciles.
func (u *run) setScope(current *dg.Graph) {
	switch {
	case u.intended != nil:
		u.intRoot = u.intended.Root()
		u.scope = scopeKey(u.intended)
		if only, ok := u.intended.SingleItem(); ok {
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
	if only, ok := g.SingleItem(); ok {
		return g.Path() + "#" + only.String()
	}
	return g.Path()
}

// asCur returns the current-state node of a node of either graph.
func (u *run) asCur(n *dg.Node) *dg.Node { return n.In(u.cur) }

// intNode returns the intended-state node of a current-state node, if any.
func (u *run) intNode(c *dg.Node) *dg.Node {
	if u.intRoot == nil {
		return nil
	}
	return c.Peer(u.intRoot)
}

func (u *run) inScope(c, i *dg.Node) bool {
	if u.intended != nil && i != nil && u.intended.Holds(i) {
		return true
	}
	return u.curScope != nil && u.curScope.Holds(c)
}

func (u *run) inScopeRef(ref dg.ItemRef) bool {
	if u.intended != nil && u.intended.Contains(ref) {
		return true
	}
	return u.curScope != nil && u.curScope.Contains(ref)
}

// target is the intended value of an item: what should exist.
type target struct {
	item dg.Item
	deps []dg.Dependency
	req  []*dg.Node // nodes of deps[i].RequiredItem (of either graph)
	ok   bool
}

// want returns the intended value of c's item, if it should exist. Items
// out of scope keep their intended value from the whole tree, or else their
// current value: a run never deletes what is outside its scope.
func (u *run) want(c *dg.Node) target { return u.wantOf(c, u.intNode(c)) }

// wanted is want(c).ok: whether c's item should exist.
func (u *run) wanted(c *dg.Node) bool {
	i := u.intNode(c)
	switch {
	case u.intended != nil && i != nil && u.intended.Holds(i):
		return true
	case u.inScope(c, i):
		return false
	}
	return i != nil && i.Present() || c.Present()
}

// wantedItem is want(c) without the dependencies: the intended value of
// c's item, if it should exist.
func (u *run) wantedItem(c *dg.Node) (dg.Item, bool) {
	i := u.intNode(c)
	if u.intended != nil && i != nil && u.intended.Holds(i) {
		return i.Item(), true
	}
	if u.inScope(c, i) {
		return nil, false
	}
	if i != nil && i.Present() {
		return i.Item(), true
	}
	if c.Present() {
		return c.Item(), true
	}
	return nil, false
}

// wantOf is want for c whose intended node is i (or nil).
func (u *run) wantOf(c, i *dg.Node) target {
	if u.intended != nil && i != nil && u.intended.Holds(i) {
		return target{i.Item(), i.Dependencies(), i.Required(), true}
	}
	if u.inScope(c, i) {
		return target{}
	}
	if i != nil && i.Present() {
		return target{i.Item(), i.Dependencies(), i.Required(), true}
	}
	if c.Present() {
		return target{c.Item(), c.Dependencies(), c.Required(), true}
	}
	return target{}
}

func (u *run) enqueue(c *dg.Node) {
	if u.has(c, fQueued) {
		return
	}
	u.set(c, fQueued)
	u.queue = append(u.queue, c)
}

// roomForOne makes room in s for one more element, doubling a full slice
// of 256 elements or more: append grows such a slice by a quarter at a
// time, leaving behind about four times its final size as garbage (the
// proposals and the items blocked at the initial reconcile of a whole
// graph). Below that, append doubles too.
func roomForOne[S ~[]E, E any](s S) S {
	if len(s) < cap(s) || len(s) < 256 {
		return s
	}
	grown := make(S, len(s), 2*len(s)) // not slices.Grow: it overshoots
	copy(grown, s)
	return grown
}

// roomForUpTo is roomForOne for a slice that gets at most n more
// elements, this one included: it does not double past them (a wave of
// 100k creates made room for 131072 proposals).
func roomForUpTo[S ~[]E, E any](s S, n int) S {
	if len(s) < cap(s) || len(s) < 256 {
		return s
	}
	grown := make(S, len(s), len(s)+min(len(s), max(n, 1)))
	copy(grown, s)
	return grown
}

func (u *run) enqueueAll(nodes []*dg.Node) {
	for _, c := range nodes {
		u.enqueue(c)
	}
}

// takeWave returns the queued nodes in the order they were queued and
// empties the queue. That order only depends on the order in which the
// graphs were built and changed, never on map iteration, so the same
// inputs give the same operation log.
func (u *run) takeWave() []*dg.Node {
	wave := u.queue
	u.queue = u.spareQueue[:0]
	if u.queue == nil && len(wave) > 1024 { // a big run: do not grow step by step
		u.queue = make([]*dg.Node, 0, len(wave))
	}
	u.spareQueue = nil
	for _, c := range wave {
		m := &u.scratch[c.Index()] // stamped by enqueue
		m.flags = m.flags&^fQueued | fInWave
	}
	return wave
}

func (u *run) endWave(wave []*dg.Node) {
	for _, c := range wave {
		u.unset(c, fInWave)
	}
	clear(wave)
	u.spareQueue = wave[:0]
}

// graphFor returns the subgraph of the current state where the item of
// a node whose intended node is i (or nil) belongs: the same path as in
// the intended state.
func (u *run) graphFor(i *dg.Node) *dg.Graph {
	if i == nil || !i.Present() {
		return u.cur
	}
	path := i.Scope()
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
