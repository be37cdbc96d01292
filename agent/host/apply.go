package host

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/netagent/netagent/agent/linkwatch"
	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Result is the outcome of an Apply or a Plan.
type Result struct {
	// Ops lists the operations run (Apply) or that an apply would run now
	// (Plan), in order.
	Ops reconciler.OperationLog
	// Problems lists, by item, what did not converge: failed operations
	// and blocked items, sorted by ref.
	Problems []Problem
	// Err joins the reconciler's errors (one per failed operation, and per
	// item of a dependency cycle); nil when there were none.
	Err error
	// Current is the current state after the run (predicted, for Plan).
	Current *dg.Graph
}

// Problem is an item that did not converge, and why.
type Problem struct {
	Ref dg.ItemRef
	// Blocked: the item waits for a dependency; otherwise an operation on
	// it failed or it could not be created.
	Blocked bool
	// WaitsOnLink: the item is blocked on an external item (a link's
	// presence, carrier or state), directly or through other blocked
	// items, so a link event may unblock it. An item blocked only behind a
	// failed item or a cycle has it false: Apply does not wait for it.
	WaitsOnLink bool
	// MissingNIC names the NIC the item is, or waits for, when it does not
	// exist on this host and nothing in the intent creates it: a physical
	// interface's NIC, by name or by match. Only a hotplug brings it, so a
	// one-shot Apply does not wait for it (ApplyOptions.WaitForNICs); the
	// daemon does, at every link event.
	MissingNIC string
	// WaitsOnState names the link whose state (its carrier) the blocked
	// item waits for, directly or through other blocked items; "" if it
	// waits for nothing of a link's state. A plan whose operations set
	// that link up predicts a wait, not a failure (oneshot's Outcome).
	WaitsOnState string
	// Unkept: the kernel did not keep the change (see Verifier); the
	// item is not converging, Reason says what the kernel holds.
	Unkept bool
	Reason string
}

// String renders the problem as "route/x: failed: why" (or blocked, or
// not-converging).
func (p Problem) String() string {
	state := "failed"
	switch {
	case p.Blocked:
		state = "blocked"
	case p.Unkept:
		state = "not-converging"
	}
	return fmt.Sprintf("%s: %s: %s", p.Ref, state, p.Reason)
}

// Converged reports whether every item converged: no problems, no errors.
func (r *Result) Converged() bool { return len(r.Problems) == 0 && r.Err == nil }

// MaxPasses bounds the reconcile passes of one Apply.
const MaxPasses = 3

// ApplyOptions are the options of Apply.
type ApplyOptions struct {
	// Wait bounds how long Apply waits, when items are blocked, for the
	// link events that would unblock them (see Apply). 0: no wait.
	Wait time.Duration
	// WaitForNICs: wait also for items that wait only for NICs that do
	// not exist on this host (Problem.MissingNIC), for a hotplug; without
	// it Apply does not wait for them.
	WaitForNICs bool
}

// Apply converges the namespace: it reads the current state back,
// reconciles it towards intended, waits for operations that continue in
// the background (reconciling again as they finish) and reports the
// outcome per item. Every owned object that intended does not hold is
// deleted. The error is for a failed read-back; item failures are in the
// Result.
//
// With opts.Wait, when items are blocked (a route waiting for its link's
// carrier, which comes a moment after Apply set the link up), Apply
// subscribes to the namespace's link events, converges again on a fresh
// read-back and again at every link event, for at most opts.Wait in all.
// It returns as soon as nothing is blocked; items still blocked when the
// wait ends are reported with their reason.
func (r *Runtime) Apply(ctx context.Context, intended *dg.Graph, opts ApplyOptions) (*Result, error) {
	return r.applyOn(ctx, r.Kernel(), intended, opts)
}

// applyOn is Apply through b (the Kernel, or a Backend around it).
func (r *Runtime) applyOn(ctx context.Context, b Backend, intended *dg.Graph, opts ApplyOptions) (*Result, error) {
	converge := func(ctx context.Context) (*Result, error) { return Converge(ctx, b, intended) }
	if opts.Wait <= 0 || r.target == nil { // fakes (OpenFake) have no link events
		return converge(ctx)
	}
	subscribe := func(ctx context.Context) <-chan linkwatch.Event {
		events := make(chan linkwatch.Event)
		go linkwatch.NewNetlink(r.target.Name, r.log).Watch(ctx, events)
		return events
	}
	w := waiter{converge: converge, subscribe: subscribe, after: time.After, wait: opts.Wait, nics: opts.WaitForNICs, log: r.log}
	return w.run(ctx)
}

// Backend is what Converge needs of a target: Kernel is one, and so is the
// daemon's view of the kernel (agent.Kernel), or a test's fake.
type Backend interface {
	ReadCurrent(ctx context.Context, hint *dg.Graph) (*dg.Graph, error)
	Reconcile(ctx context.Context, records *reconciler.Records, current, intended *dg.Graph) reconciler.Status
}

// Converge is the one-shot driver: it reconciles on a fresh read-back
// each time until a pass runs no operation, fails, or MaxPasses passes
// ran, and reports the changes the kernel did not keep as Verifier's rule
// says (the daemon's drift check follows it too).
//
// A pass that ran operations, all successful, is followed by another pass
// on a fresh read-back, because the kernel sometimes undoes one change as a
// side effect of another (a bridge whose MAC changes when a port leaves
// flushes its neighbor entries, permanent ones included): the item is
// written again. An item found undone a second time in a row is not
// written again but reported as not converging (Problem.Unkept), with what
// the kernel holds. A read-back that finds exactly what the last pass
// left (it converged: every intended item as intended, nothing else of
// netagent's) confirms convergence without another pass, which would run
// nothing (at 100k routes it took 0.15 s and the engine's scratch on top
// of both graphs); so does a pass that runs no operation. After MaxPasses
// passes that all ran operations, a last read-back reports the changes of
// the last pass the kernel did not keep.
func Converge(ctx context.Context, b Backend, intended *dg.Graph) (*Result, error) {
	v := NewVerifier()
	var (
		ops     reconciler.OperationLog
		last    *Result
		written func(dg.ItemRef) bool
	)
	for pass := 1; ; pass++ {
		var made *dg.Graph // what the last pass's writes made; nil before the first
		if last != nil {
			made = last.Current
		}
		cur, err := readPass(ctx, b, intended, made)
		if err != nil {
			return nil, err
		}
		if cur == nil { // the read-back found exactly what the last pass left
			return last, nil
		}
		var found []Finding
		if last != nil {
			found, _ = v.verify(last.Current, cur, intended, written, time.Now())
			if len(found) == 0 { // last converged (else no next pass), and the kernel kept it
				last.Current = cur
				return last, nil
			}
			holdUnkept(cur, found)
		}
		if pass > MaxPasses {
			return reportUnkept(last, found, true), nil
		}
		res := applyPass(ctx, b, cur, intended)
		n := len(res.Ops)
		written = writtenBy(res.Ops)
		if ops == nil {
			ops = res.Ops // not a copy: 14 MB at 100k operations
		} else {
			ops = append(ops, res.Ops...)
		}
		res.Ops = ops
		if n == 0 || !res.Converged() || ctx.Err() != nil {
			return reportUnkept(res, found, false), nil
		}
		last = res
	}
}

// afterWriteLister is a Backend with a cheaper read-back for right after
// its own reconcile, as a list of items (ok false: it has none; Kernel has
// one: the firewall may use the tables it saved after its last write).
type afterWriteLister interface {
	ReadItemsAfterWrite(ctx context.Context, hint *dg.Graph) (list []dg.Item, ok bool, err error)
}

// readItemsAfterWrite is b's ReadItemsAfterWrite if it has one.
func readItemsAfterWrite(ctx context.Context, b Backend, hint *dg.Graph) ([]dg.Item, bool, error) {
	if l, ok := b.(afterWriteLister); ok {
		return l.ReadItemsAfterWrite(ctx, hint)
	}
	return nil, false, nil
}

// readPass reads back for a pass: for the first (written nil), the
// kernel as it is; for a later one, right after the previous pass's
// writes, which left written (the current graph the writes made). It
// returns nil when that read-back finds exactly what written holds
// (holdsExactly): the writes converged, and the kernel kept them; building
// the graph of the read-back and comparing the two took a tenth of an
// initial apply at 100k routes, and the third graph was a sixth of its
// peak memory.
func readPass(ctx context.Context, b Backend, intended, written *dg.Graph) (*dg.Graph, error) {
	if written == nil {
		return b.ReadCurrent(ctx, intended)
	}
	list, ok, err := readItemsAfterWrite(ctx, b, intended)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return b.ReadCurrent(ctx, intended)
	case holdsExactly(list, written, intended):
		return nil, nil
	}
	cur, _ := currentGraph(list, intended)
	return cur, nil
}

// holdsExactly reports whether list, a read-back, holds exactly what
// written (the graph the writes made, or any current graph) holds: each
// item of list is the item of written's node of the same reference (the same pointer, or an equal item), each node once,
// every node of written settled (created) and read back. Then DiffReadBack
// of the two would find nothing. An item the read-back found as intended
// is the intended item itself (the read-back's hint), and the writes put
// that same item into written: its node is the intended node's peer,
// which the reconcile cached, found without making the item's name.
func holdsExactly(list []dg.Item, written, intended *dg.Graph) bool {
	if len(list) != written.Len() {
		return false
	}
	next := intendedCursor(intended)
	var looked []*dg.Node // the nodes not found by the cursor
	for _, it := range list {
		var n *dg.Node
		if src := next.holding(it); src != nil {
			n = heldNode(written, src.Ref(), src.Peer(written))
		} else if n = heldNode(written, dg.Ref(it), nil); n != nil {
			looked = append(looked, n)
		}
		if n == nil || n.State().State != dg.StateCreated {
			return false
		}
		if have := n.Item(); !identical(have, it) && !have.Equal(it) {
			return false
		}
	}
	// The cursor finds each intended node once; a node also found by its
	// name (the read-back listed its reference twice) leaves another node
	// of written unread.
	if len(looked) == 0 {
		return true
	}
	seen := make(map[*dg.Node]struct{}, len(list))
	for _, n := range looked {
		seen[n] = struct{}{}
	}
	if len(seen) != len(looked) {
		return false
	}
	next = intendedCursor(intended)
	for _, it := range list {
		if src := next.holding(it); src != nil {
			if _, twice := seen[src.Peer(written)]; twice {
				return false
			}
		}
	}
	return true
}

// applyPass reconciles cur once, waiting for background operations.
func applyPass(ctx context.Context, b Backend, cur, intended *dg.Graph) *Result {
	records := reconciler.NewRecords()
	st := b.Reconcile(ctx, records, cur, intended)
	ops := st.OperationLog
	for st.AsyncOpsInProgress {
		select {
		case <-st.ReadyToResume:
		case <-ctx.Done():
			st.CancelAsyncOps(nil)
			st.WaitForAsyncOps()
		}
		st = b.Reconcile(ctx, records, cur, intended)
		ops = append(ops, st.OperationLog...)
	}
	st.OperationLog = ops
	return Summarize(st, intended)
}

// writtenBy reports whether the successful operations of ops wrote an
// item. It makes the set of those items at its first call: a pass whose
// read-back finds nothing changed never calls it (the set held 6 MB at
// 100k operations while the next read-back ran).
func writtenBy(ops reconciler.OperationLog) func(dg.ItemRef) bool {
	var w map[dg.ItemRef]bool
	return func(ref dg.ItemRef) bool {
		if w == nil {
			w = make(map[dg.ItemRef]bool, len(ops))
			for _, e := range ops {
				if !e.InProgress && e.Err == nil {
					w[e.Ref] = true
				}
			}
		}
		return w[ref]
	}
}

// holdUnkept puts back into cur what was written of the held items, so
// that the pass leaves them alone.
func holdUnkept(cur *dg.Graph, found []Finding) {
	for _, f := range found {
		if f.Held() {
			f.Hold(cur, time.Now())
		}
	}
}

// reportUnkept adds the held items of found (all with all: the last
// read-back, after which nothing is written again) to res's problems, and
// puts the kernel's version of each into res.Current.
func reportUnkept(res *Result, found []Finding, all bool) *Result {
	for _, f := range found {
		if f.Unkept == nil || !all && !f.Held() {
			continue
		}
		f.Apply(res.Current, time.Now())
		res.Problems = slices.DeleteFunc(res.Problems, func(p Problem) bool { return p.Ref == f.Ref })
		res.Problems = append(res.Problems, Problem{Ref: f.Ref, Unkept: true, Reason: f.Unkept.Reason})
	}
	slices.SortFunc(res.Problems, func(a, b Problem) int { return a.Ref.Compare(b.Ref) })
	return res
}

// unsettled reports the items of ops as problems: a plan predicts that
// the kernel does not keep what the operations did.
func unsettled(ops reconciler.OperationLog) []Problem {
	var out []Problem
	for _, e := range ops {
		if !slices.ContainsFunc(out, func(p Problem) bool { return p.Ref == e.Ref }) {
			out = append(out, Problem{Ref: e.Ref, Unkept: true, Reason: fmt.Sprintf("the kernel did not keep the change: still a %s after %d passes", e.Op, MaxPasses)})
		}
	}
	return out
}

// Summarize turns a reconciler Status into a Result: blocked items with
// their reason; intended items that failed or are missing, and current
// items that should be gone, with their last error.
func Summarize(st reconciler.Status, intended *dg.Graph) *Result {
	if intended == nil {
		intended = dg.New("intended")
	}
	res := &Result{Ops: st.OperationLog, Err: st.Err, Current: st.NewCurrentState}
	waits := newLinkWaits(intended, st.NewCurrentState, func(ref dg.ItemRef) (dg.ItemRef, bool) {
		_, blocked := st.Blocked[ref]
		return st.BlockedOn[ref], blocked
	}, len(st.Blocked))
	for ref, reason := range st.Blocked {
		reason = strings.TrimPrefix(reason, "blocked: ")
		nic := waits.missingNIC(ref)
		if nic != "" {
			reason = missingNICReason(reason, nic, st.BlockedOn[ref])
		}
		res.Problems = append(res.Problems, Problem{Ref: ref, Blocked: true, WaitsOnLink: waits.of(ref), Reason: reason, MissingNIC: nic, WaitsOnState: waits.stateOf(ref)})
	}
	for want, have := range eachPairUnordered(intended, st.NewCurrentState) {
		ref := refOf(want, have)
		if _, blocked := st.Blocked[ref]; blocked {
			continue
		}
		if reason, bad := problem(want, have); bad {
			if held, ok := st.Held[ref]; ok {
				reason = "not deleted: " + held
			}
			p := Problem{Ref: ref, Reason: reason}
			if have != nil && errors.Is(have.State().LastErr, link.ErrNoMatch) {
				p.MissingNIC = ref.Name
				p.Reason += ": the NIC does not exist on this host"
			}
			res.Problems = append(res.Problems, p)
		}
	}
	slices.SortFunc(res.Problems, func(a, b Problem) int { return a.Ref.Compare(b.Ref) })
	return res
}

// missingNICReason says why an item waits for the NIC nic, which does not
// exist on this host: plainly for the physical interface that is the NIC
// (blocked on its link, on), after the reason of the items behind it.
func missingNICReason(reason, nic string, on dg.ItemRef) string {
	if on == items.LinkRef(nic) {
		return "NIC " + nic + " does not exist on this host (a physical interface, found by the name " + nic + "; nothing in the intent creates it)"
	}
	return reason + " (NIC " + nic + " does not exist on this host)"
}

// problem says why an item has not converged, if it has not: want is its
// node in the intended graph, have in the current one (nil: absent).
func problem(want, have *dg.Node) (string, bool) {
	wanted, exists := want != nil, have != nil
	var st dg.StateData
	if exists {
		st = have.State()
	}
	switch {
	case exists && have.Item().External() || wanted && want.Item().External():
		return "", false
	case st.State == dg.StateFailed:
		return fmt.Sprintf("%s failed: %v", st.LastOp, st.LastErr), true
	case wanted && !exists:
		return "not created", true
	case !wanted && exists:
		return "not deleted", true
	case wanted && !identical(have.Item(), want.Item()) && !have.Item().Equal(want.Item()):
		return "not changed", true
	}
	return "", false
}

// unionRefs returns the refs of both graphs (either may be nil), sorted.
func unionRefs(a, b *dg.Graph) []dg.ItemRef {
	var refs []dg.ItemRef
	for ref := range eachRef(a, b) {
		refs = append(refs, ref)
	}
	return refs
}

// eachRef yields the refs of both graphs (either may be nil) in order,
// each once: a merge of their Refs, which each graph sorts once and keeps
// (the intended graph's serve every pass).
func eachRef(a, b *dg.Graph) iter.Seq[dg.ItemRef] {
	refsOf := func(g *dg.Graph) []dg.ItemRef {
		if g == nil {
			return nil
		}
		return g.Refs()
	}
	x, y := refsOf(a), refsOf(b)
	return func(yield func(dg.ItemRef) bool) {
		for len(x) > 0 || len(y) > 0 {
			var ref dg.ItemRef
			switch c := cmpHead(x, y); {
			case c < 0:
				ref, x = x[0], x[1:]
			case c > 0:
				ref, y = y[0], y[1:]
			default:
				ref, x, y = x[0], x[1:], y[1:]
			}
			if !yield(ref) {
				return
			}
		}
	}
}

// eachPair yields, in ref order, the node of each ref of a and of b (either
// graph may be nil) in a and in b, nil where the graph does not hold the
// item. The node in b of an item of a is found through the node's cached
// peer (see currentGraph), not looked up again.
func eachPair(a, b *dg.Graph) iter.Seq2[*dg.Node, *dg.Node] {
	return func(yield func(*dg.Node, *dg.Node) bool) {
		for ref := range eachRef(a, b) {
			na, nb := heldNode(a, ref, nil), (*dg.Node)(nil)
			if na != nil && b != nil {
				nb = heldNode(b, ref, na.Peer(b))
			} else if b != nil {
				nb = heldNode(b, ref, nil)
			}
			if !yield(na, nb) {
				return
			}
		}
	}
}

// eachPairUnordered is eachPair in no particular order, for callers that
// sort what they find (a few problems) rather than every item: it walks
// a's items in the order they were added (nodesOf), each with its peer in
// b, then b's items without one, which it skips when a's held all of b's.
// Sorting 100k refs cost 0.05 s of a no-op apply's 0.8 s.
func eachPairUnordered(a, b *dg.Graph) iter.Seq2[*dg.Node, *dg.Node] {
	return eachPairListed(a, b, nil)
}

// eachPairListed is eachPairUnordered with, in bNodes, b's nodes as b's
// builder listed them (currentGraph), used instead of nodesOf(b) when they
// are all of b's items, each once.
func eachPairListed(a, b *dg.Graph, bNodes []*dg.Node) iter.Seq2[*dg.Node, *dg.Node] {
	return func(yield func(*dg.Node, *dg.Node) bool) {
		matched := 0
		for na := range nodesOf(a) {
			if !a.Holds(na) {
				continue
			}
			var nb *dg.Node
			if b != nil {
				nb = heldNode(b, na.Ref(), na.Peer(b))
			}
			if nb != nil {
				matched++
			}
			if !yield(na, nb) {
				return
			}
		}
		if b == nil || b.Len() == matched {
			return
		}
		rest := nodesOf(b)
		if allOf(b, bNodes) {
			rest = slices.Values(bNodes)
		}
		for nb := range rest {
			if a != nil && heldNode(a, nb.Ref(), nb.Peer(a)) != nil {
				continue
			}
			if !yield(nil, nb) {
				return
			}
		}
	}
}

// nodesOf yields the nodes of g's items (g may be nil), each once: in
// the order its journal recorded them when the journal holds exactly
// them (a graph built once, as render does, with no item replaced or
// deleted: the order they are in memory, which a walk of 100k nodes
// visits in half the time of another), else in no particular order
// (UnorderedNodes; not sorted: the current graph after a reconcile,
// whose writes are not journaled, took 0.05 s and 4 MB to sort at 100k
// routes).
func nodesOf(g *dg.Graph) iter.Seq[*dg.Node] {
	if g == nil {
		return func(func(*dg.Node) bool) {}
	}
	if g.IsRoot() {
		if nodes, ok := g.NodesChangedSince(0); ok && allOf(g, nodes) {
			return slices.Values(nodes)
		}
	}
	return g.UnorderedNodes()
}

// allOf reports whether nodes are all of g's items, each once: as many
// as g has items, all held by g, none twice: a bit per node Index, 12 KB
// at 100k nodes (a set of their pointers held 3 MB, and cost a tenth of
// sorting them).
func allOf(g *dg.Graph, nodes []*dg.Node) bool {
	if len(nodes) != g.Len() {
		return false
	}
	top := 0
	for _, n := range nodes {
		if n.Dead() || !g.Holds(n) {
			return false
		}
		top = max(top, n.Index())
	}
	seen := make([]uint64, top/64+1) // by Index: unique within g's tree
	for _, n := range nodes {
		i := n.Index()
		if seen[i/64]&(1<<(i%64)) != 0 {
			return false
		}
		seen[i/64] |= 1 << (i % 64)
	}
	return true
}

// heldNode returns the node of ref in g (n when given) if g holds its item.
func heldNode(g *dg.Graph, ref dg.ItemRef, n *dg.Node) *dg.Node {
	if g == nil {
		return nil
	}
	if n == nil {
		n = g.Node(ref)
	}
	if n == nil || !g.Holds(n) {
		return nil
	}
	return n
}

// refOf is the ref of whichever node is there.
func refOf(a, b *dg.Node) dg.ItemRef {
	if a != nil {
		return a.Ref()
	}
	return b.Ref()
}

// cmpHead compares the first refs of x and y; an empty list is last.
func cmpHead(x, y []dg.ItemRef) int {
	switch {
	case len(y) == 0:
		return -1
	case len(x) == 0:
		return 1
	}
	return x[0].Compare(y[0])
}
