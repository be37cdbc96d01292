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
	out.Disruptions = p.predictions(res.Ops)
	return out, nil
}

// predicting is a Backend that predicts what the operations of each of its
// reconciles do to traffic, from the state the reconcile starts from, in
// the order the reconciles ran them (Converge and the wait of Apply keep
// every reconcile's operations, in that order). It keeps what each
// reconcile's predictions need and makes them once the apply is done
// (predictions): at 100k routes they hold 8 MB, which the apply's
// Summarize and read-back need not share the heap with.
type predicting struct {
	Backend
	// found reads what the physical NICs had before netagent (nil: not
	// known), which their delete gives back.
	found  func() link.Found
	passes []predictPass
	// adoptions, while the Runtime adopts, finds the creates that take
	// over someone else's object; adopted gathers them.
	adoptions func(intended *dg.Graph) map[dg.ItemRef]Adoption
	adopted   map[dg.ItemRef]Adoption
}

// predictPass is what the predictions of one reconcile's operations are
// made from.
type predictPass struct {
	before  *dg.Graph // what of the state it started from they need
	found   link.Found
	adopted map[dg.ItemRef]Adoption
	ops     int // its operations
}

// Reconcile keeps what the predictions need of current (and of the NICs'
// found settings, which a restore forgets) before the reconciler changes
// it, and reconciles.
func (p *predicting) Reconcile(ctx context.Context, records *reconciler.Records, current, intended *dg.Graph) reconciler.Status {
	pass := predictPass{before: configurators.PredictInputs(current)}
	if p.found != nil {
		pass.found = p.found()
	}
	if p.adoptions != nil {
		pass.adopted = p.adoptions(intended)
	}
	st := p.Backend.Reconcile(ctx, records, current, intended)
	pass.ops = len(st.OperationLog)
	p.passes = append(p.passes, pass)
	for ref, a := range pass.adopted {
		if p.adopted == nil {
			p.adopted = make(map[dg.ItemRef]Adoption)
		}
		if _, seen := p.adopted[ref]; !seen {
			p.adopted[ref] = a
		}
	}
	return st
}

// predictions says what each of ops, the operations of the reconciles in
// the order they ran, does to traffic, each from the state its reconcile
// started from; nil when there are none, or ops are not as many as theirs.
func (p *predicting) predictions(ops reconciler.OperationLog) []disrupt.Prediction {
	n := 0
	for _, pass := range p.passes {
		n += pass.ops
	}
	if n != len(ops) || n == 0 {
		return nil
	}
	var preds []disrupt.Prediction
	for _, pass := range p.passes {
		seg := ops[:pass.ops]
		ops = ops[pass.ops:]
		pp := PredictOpsFound(seg, pass.before, pass.found)
		predictAdoptions(seg, pp, pass.adopted, pass.found)
		if preds == nil {
			preds = pp // not a copy: 8 MB at 100k operations
		} else {
			preds = append(preds, pp...)
		}
	}
	return preds
}

// ReadItemsAfterWrite is the Backend's read-back after its own reconcile
// as a list, when it has one (nil, false otherwise).
func (p *predicting) ReadItemsAfterWrite(ctx context.Context, hint *dg.Graph) ([]dg.Item, bool, error) {
	return readItemsAfterWrite(ctx, p.Backend, hint)
}
