package host

import (
	"context"

	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/reconciler"
)

// Applied is the outcome of ApplyPredicted: Apply's Result, and what each
// operation it ran does to traffic.
type Applied struct {
	Result
	// Disruptions says, for each operation of Ops, what it does to
	// traffic, predicted as Plan predicts it (PredictOps) from the state
	// its pass started from: the running state the pass read back before
	// it changed anything. Nil when they could not be lined up with Ops.
	Disruptions []disrupt.Prediction
	// Adoptions are the creates of Ops that took over someone else's
	// object (with Options.Adopt), as in PlanResult.
	Adoptions map[dg.ItemRef]Adoption
}

// ApplyPredicted is Apply that also says what each operation does to
// traffic, as Plan does with the same inputs, so that an apply prints the
// prediction its plan printed (an MTU change on a NIC: a possible link
// flap, from the MTU the link had). It reads the kernel no more than
// Apply: before each reconcile it keeps the part of the state read back
// that the predictions need (configurators.PredictInputs: the links,
// ports and addresses, not the routes).
func (r *Runtime) ApplyPredicted(ctx context.Context, intended *dg.Graph, opts ApplyOptions) (*Applied, error) {
	p := &predicting{Backend: r.Kernel(), found: r.found}
	if r.adopt {
		p.adoptions = func(intended *dg.Graph) map[dg.ItemRef]Adoption {
			a, err := r.adoptions(intended, nil)
			if err != nil {
				r.log.WithError(err).Warn("apply: naming the adoptions")
			}
			return a
		}
	}
	res, err := r.applyOn(ctx, p, intended, opts)
	if err != nil {
		return nil, err
	}
	out := &Applied{Result: *res, Adoptions: p.adopted}
	if len(p.preds) == len(res.Ops) {
		out.Disruptions = p.preds
	}
	return out, nil
}

// predicting is a Backend that predicts what the operations of each of its
// reconciles do to traffic, from the state the reconcile starts from, in
// the order the reconciles ran them (Converge and the wait of Apply keep
// every reconcile's operations, in that order).
type predicting struct {
	Backend
	// found reads what the physical NICs had before netagent (nil: not
	// known), which their delete gives back.
	found func() link.Found
	preds []disrupt.Prediction
	// adoptions, while the Runtime adopts, finds the creates that take
	// over someone else's object; adopted gathers them.
	adoptions func(intended *dg.Graph) map[dg.ItemRef]Adoption
	adopted   map[dg.ItemRef]Adoption
}

// Reconcile keeps what the predictions need of current (and of the NICs'
// found settings, which a restore forgets) before the reconciler changes
// it, reconciles, and predicts the operations run.
func (p *predicting) Reconcile(ctx context.Context, records *reconciler.Records, current, intended *dg.Graph) reconciler.Status {
	before := configurators.PredictInputs(current)
	var found link.Found
	if p.found != nil {
		found = p.found()
	}
	var adopted map[dg.ItemRef]Adoption
	if p.adoptions != nil {
		adopted = p.adoptions(intended)
	}
	st := p.Backend.Reconcile(ctx, records, current, intended)
	preds := PredictOpsFound(st.OperationLog, before, found)
	predictAdoptions(st.OperationLog, preds, adopted, found)
	if p.preds == nil {
		p.preds = preds // not a copy: 8 MB at 100k operations
	} else {
		p.preds = append(p.preds, preds...)
	}
	for ref, a := range adopted {
		if p.adopted == nil {
			p.adopted = make(map[dg.ItemRef]Adoption)
		}
		if _, seen := p.adopted[ref]; !seen {
			p.adopted[ref] = a
		}
	}
	return st
}

// ReadItemsAfterWrite is the Backend's read-back after its own reconcile
// as a list, when it has one (nil, false otherwise).
func (p *predicting) ReadItemsAfterWrite(ctx context.Context, hint *dg.Graph) ([]dg.Item, bool, error) {
	return readItemsAfterWrite(ctx, p.Backend, hint)
}
