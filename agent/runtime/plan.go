package runtime

import (
	"context"

	"github.com/netagent/netagent/configurators"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// Plan returns the exact operations an Apply would run now, in order,
// without changing anything: reconciler.Plan on the read-back state. An
// operation on an item whose place in the kernel someone else's object
// holds (configurators.Clashes) is predicted to fail as Apply's would, with
// the same error: it is in the log with its error and in Problems, and what
// depends on it is blocked. Every other problem (a blocked item) is one
// Apply would report too.
func (r *Runtime) Plan(ctx context.Context, intended *dg.Graph) (*Result, error) {
	cur, err := r.ReadCurrent(intended)
	if err != nil {
		return nil, err
	}
	clashes, err := configurators.Clashes(r.target, r.stateDir, intended)
	if err != nil {
		return nil, err
	}
	rec := reconciler.New(r.reg, reconciler.WithPrediction(predictClashes(clashes)))
	st := rec.Plan(ctx, cur, intended)
	return Summarize(st, intended), nil
}

// predictClashes predicts that creating or modifying an item of clashes
// fails with its error. Deleting never clashes: netagent deletes only
// what it owns, and the object at that place is then its own.
func predictClashes(clashes map[dg.ItemRef]error) func(reconciler.Operation, dg.Item) error {
	return func(op reconciler.Operation, it dg.Item) error {
		if op == reconciler.OpDelete {
			return nil
		}
		return clashes[dg.Ref(it)]
	}
}
