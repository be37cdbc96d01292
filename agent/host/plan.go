package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/netagent/netagent/configurators"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/reconciler"
)

// PlanResult is the outcome of a Plan: the Result an Apply would have,
// with the passes it would run told apart, and what the kernel changes by
// itself as the operations run.
type PlanResult struct {
	Result
	// FollowUps gives, for each pass after the first, the index in Ops of
	// its first operation.
	FollowUps []int
	// SideEffects lists the intended items the kernel changes by itself
	// when the planned operations run (configurators.SideEffects). Apply
	// reads the kernel back after a pass and writes them again in a
	// follow-up pass: the certain ones are planned as such (Ops from
	// FollowUps on); the others make Apply run one if the kernel does it.
	SideEffects []configurators.SideEffect
	// Disruptions says, for each operation of Ops, what it does to
	// traffic (PredictOps); SummarizeDisruption sums them up.
	Disruptions []disrupt.Prediction
	// Adoptions are the creates of Ops that take over someone else's
	// object (with Options.Adopt; nil without), by item: OpText names
	// them "adopt (mark only)" or "adopt and modify".
	Adoptions map[dg.ItemRef]Adoption
	// Warnings are what plan says of intended items that is no failure
	// (configurators.PlanWarnings: another owner's nftables base chain
	// that may drop what netagent's table accepts).
	Warnings []configurators.Warning
}

// Plan returns the exact operations an Apply would run now, in order,
// without changing anything: reconciler.Plan on the read-back state.
//
// An operation on an item whose place in the kernel someone else's object
// holds (configurators.Clashes; with Options.Adopt, unless its create
// takes that object over: an adoption, in Adoptions), and a delete that would take someone
// else's objects with it (configurators.DryRun), is predicted to fail as
// Apply's would, with the same error: it is in the log with its error and
// in Problems, and what depends on it is blocked.
//
// Where the kernel undoes an intended item as a side effect of a planned
// operation (a global forwarding sysctl rewrites the interfaces' keys; a
// link set down loses its neighbours), Apply's next pass writes it again:
// Plan plans that pass too, on the state the first leaves as the kernel
// changes it, up to MaxPasses passes as Apply, and lists every side effect,
// also those the kernel may or may not have (SideEffects).
func (r *Runtime) Plan(ctx context.Context, intended *dg.Graph) (*PlanResult, error) {
	cur, err := r.ReadCurrent(intended)
	if err != nil {
		return nil, err
	}
	clashes, adopted, dry, err := r.obstacles(intended)
	if err != nil {
		return nil, err
	}
	found := r.found()
	out := &PlanResult{Adoptions: adopted, Warnings: r.planWarnings(intended)}
	var ops reconciler.OperationLog
	refused := make(map[dg.ItemRef]error)
	for pass := 1; ; pass++ {
		rec := reconciler.New(r.reg, reconciler.WithPrediction(predict(clashes, refused, dry.Predict)))
		st := rec.Plan(ctx, cur, intended)
		last := st.OperationLog
		effects := configurators.SideEffects(last, cur, intended, dry)
		out.SideEffects = append(out.SideEffects, effects...)
		ops = append(ops, last...)
		preds := PredictOpsFound(last, cur, found)
		if pass == 1 {
			predictAdoptions(last, preds, adopted, found)
		}
		out.Disruptions = append(out.Disruptions, preds...)
		st.OperationLog = ops
		out.Result = *Summarize(st, intended)
		certain := certainOnly(effects)
		if len(last) == 0 && pass > 1 {
			out.FollowUps = out.FollowUps[:len(out.FollowUps)-1] // nothing to write again after all
		}
		switch {
		case len(last) > 0 && out.Converged() && pass == MaxPasses:
			out.Problems = append(out.Problems, unsettled(last)...) // as Apply
			return out, nil
		case len(last) == 0 || !out.Converged() || len(certain) == 0 || ctx.Err() != nil:
			return out, nil
		}
		cur = reread(st.NewCurrentState, intended)
		undo(cur, certain, refused)
		out.FollowUps = append(out.FollowUps, len(ops))
	}
}

// planWarnings are the namespace's warnings for intended; one that
// cannot be looked for is a warning of its own.
func (r *Runtime) planWarnings(intended *dg.Graph) []configurators.Warning {
	ws, err := r.ns.PlanWarnings(intended)
	if err != nil {
		return []configurators.Warning{{Text: fmt.Sprintf("could not look for what plan warns of: %v", err)}}
	}
	return ws
}

// PlanStatus is one dry run of the reconciler from current (the daemon's
// own current state) and its records (nil: none), with the failures Plan
// predicts from someone else's objects in the way. Without a way to find
// those (the kernel could not be read), it plans without them. The records
// are left as they are.
func (r *Runtime) PlanStatus(ctx context.Context, records *reconciler.Records, current, intended *dg.Graph) reconciler.Status {
	clashes, _, dry, err := r.obstacles(intended)
	if err != nil {
		r.log.WithError(err).Warn("plan: looking in the kernel for what stands in the way")
	}
	var refusals func(reconciler.Operation, dg.Item) error
	if dry != nil {
		refusals = dry.Predict
	}
	opts := []reconciler.Option{reconciler.WithPrediction(predict(clashes, nil, refusals))}
	if records != nil {
		opts = append(opts, reconciler.WithRecords(records))
	}
	return reconciler.New(r.reg, opts...).Plan(ctx, current, intended)
}

// obstacles looks in the kernel for what stands in the way of intended:
// someone else's objects at intended places (configurators.Clashes), but
// those the Runtime adopts (adoptions, returned apart), and the dry run
// that follows which deletes the kernel would refuse
// (configurators.NewDryRun). What could not be found is nil, and err says
// why.
func (r *Runtime) obstacles(intended *dg.Graph) (map[dg.ItemRef]error, map[dg.ItemRef]Adoption, *configurators.DryRun, error) {
	clashes, cerr := r.ns.Clashes(r.stateDir, intended)
	var adopted map[dg.ItemRef]Adoption
	if cerr == nil {
		adopted, cerr = r.adoptions(intended, clashes)
	}
	if cerr != nil {
		cerr = fmt.Errorf("looking for objects in the way of intended ones: %w", cerr)
	}
	dry, derr := r.ns.NewDryRun(r.stateDir)
	if derr != nil {
		derr = fmt.Errorf("looking for objects a delete would take along: %w", derr)
	}
	return clashes, adopted, dry, errors.Join(cerr, derr)
}

// predict predicts that creating or modifying an item of clashes fails
// with its error (deleting never clashes: netagent deletes only what it
// owns, and the object at that place is then its own), that writing an
// item of refused again fails with its error, and, for the rest, what
// refusals says (it follows every operation predicted to run; may be nil).
func predict(clashes, refused map[dg.ItemRef]error, refusals func(reconciler.Operation, dg.Item) error) func(reconciler.Operation, dg.Item) error {
	return func(op reconciler.Operation, it dg.Item) error {
		ref := dg.Ref(it)
		if op != reconciler.OpDelete {
			if err := clashes[ref]; err != nil {
				return err
			}
			if err := refused[ref]; err != nil {
				return err
			}
		}
		if refusals == nil {
			return nil
		}
		return refusals(op, it)
	}
}

func certainOnly(effects []configurators.SideEffect) []configurators.SideEffect {
	var out []configurators.SideEffect
	for _, e := range effects {
		if e.Certain {
			out = append(out, e)
		}
	}
	return out
}

// reread returns the predicted state pred as Apply's next pass finds it:
// a fresh read-back (ReadCurrent) of what the kernel then holds, built in
// the same order and shape, so that the dry run of the next pass plans
// the operations in the order that pass runs them.
func reread(pred, intended *dg.Graph) *dg.Graph {
	cur := dg.New("current")
	for it := range pred.Items() {
		subgraph(cur, scopeIn(intended, dg.Ref(it))).Put(it)
	}
	return cur
}

// scopeIn is the path of the subgraph of g that holds ref ("" for the
// root or when g does not hold it).
func scopeIn(g *dg.Graph, ref dg.ItemRef) string {
	if g == nil {
		return ""
	}
	path, _ := g.Root().ScopeOf(ref)
	return path
}

// subgraph returns the subgraph of g at path, g itself for "".
func subgraph(g *dg.Graph, path string) *dg.Graph {
	if path == "" {
		return g
	}
	return g.EditSubGraph(path)
}

// undo changes the predicted current state cur as the kernel does by
// itself (see configurators.SideEffects), and records the writes the
// kernel will refuse.
func undo(cur *dg.Graph, effects []configurators.SideEffect, refused map[dg.ItemRef]error) {
	for _, e := range effects {
		if e.Refused != nil {
			refused[e.Ref] = e.Refused
		}
		if e.After == nil {
			cur.Delete(e.Ref)
			continue
		}
		st, _ := cur.State(e.Ref)
		subgraph(cur, scopeIn(cur, e.Ref)).PutWithState(e.After, st)
	}
}
