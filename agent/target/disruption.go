package target

import (
	"slices"

	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/configurators/disrupt"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// PredictOps says what each operation of ops (one pass of a plan, in order)
// does to traffic (configurators.Predict), before being the state the pass
// starts from: the value a modify changes comes from it.
func PredictOps(ops reconciler.OperationLog, before *dg.Graph) []disrupt.Prediction {
	out := make([]disrupt.Prediction, len(ops))
	for i, e := range ops {
		out[i] = configurators.Predict(e, before)
	}
	return out
}

// Disruption is what a plan does to traffic, in short: the summary that
// heads it.
type Disruption struct {
	// LinksDown are the links that go down (flap, set down, recreated or
	// deleted), in the order the plan first takes them down.
	LinksDown []LinkDown
	// Withdrawn are the routes the plan withdraws, for the duration (a
	// recreate) or for good, and those the kernel withdraws by itself as
	// an operation runs (SideEffects), in plan order.
	Withdrawn []WithdrawnRoute
}

// LinkDown is one link that goes down, and why.
type LinkDown struct {
	Link string
	// Effect is the worst of what the operations do to it; Certain is
	// false when every one of them only may take it down.
	Effect  disrupt.Effect
	Certain bool
	// Operations are the operations that take it down: "modify
	// interface/eth0", "recreate interface/vx0" (the delete and create of
	// a recreate count once).
	Operations []string
}

// WithdrawnRoute is one route withdrawn, by an operation of the plan, or by
// the kernel with one (an address's subnet route) or after one.
type WithdrawnRoute struct {
	// Route is the item ("route/main 10.0.0.0/8 metric 0"), or the
	// kernel's route `ip route` style ("10.4.0.0/24 dev v3").
	Route string
	// Effect is disrupt.Withdrawn (it comes back) or disrupt.Removed.
	Effect disrupt.Effect
	// Cause is the operation: "delete route/x", "recreate route/x", or,
	// for the kernel's, "the kernel, with delete address/v3/10.4.0.1/24"
	// or "the kernel, after modify interface/eth0".
	Cause string
}

// SummarizeDisruption sums up the predictions of ops (aligned with ops) and the side
// effects of a plan.
func SummarizeDisruption(ops reconciler.OperationLog, preds []disrupt.Prediction, effects []configurators.SideEffect) Disruption {
	var d Disruption
	byLink := map[string]int{}
	seenRoute := map[string]bool{}
	for i, e := range ops {
		if i >= len(preds) || e.Err != nil {
			continue
		}
		p := preds[i]
		what := opText(e)
		for _, l := range p.LinksDown {
			j, ok := byLink[l]
			if !ok {
				j = len(d.LinksDown)
				byLink[l] = j
				d.LinksDown = append(d.LinksDown, LinkDown{Link: l, Effect: p.Effect, Certain: p.Certain})
			}
			ld := &d.LinksDown[j]
			w := disrupt.Worse(disrupt.Prediction{Effect: ld.Effect, Certain: ld.Certain}, disrupt.Prediction{Effect: p.Effect, Certain: p.Certain})
			ld.Effect, ld.Certain = w.Effect, ld.Certain || p.Certain
			if !slices.Contains(ld.Operations, what) {
				ld.Operations = append(ld.Operations, what)
			}
		}
		for _, r := range p.Routes {
			if !seenRoute[r] {
				seenRoute[r] = true
				d.Withdrawn = append(d.Withdrawn, WithdrawnRoute{Route: r, Effect: p.Effect, Cause: "the kernel, with " + what})
			}
		}
		if e.Ref.Type == items.TypeRoute && (p.Effect == disrupt.Withdrawn || p.Effect == disrupt.Removed) && !seenRoute[e.Ref.String()] {
			seenRoute[e.Ref.String()] = true
			d.Withdrawn = append(d.Withdrawn, WithdrawnRoute{Route: e.Ref.String(), Effect: p.Effect, Cause: what})
		}
	}
	for _, s := range effects {
		if s.Ref.Type != items.TypeRoute || s.After != nil || seenRoute[s.Ref.String()] {
			continue
		}
		seenRoute[s.Ref.String()] = true
		d.Withdrawn = append(d.Withdrawn, WithdrawnRoute{Route: s.Ref.String(), Effect: disrupt.Withdrawn, Cause: "the kernel, after " + s.Cause})
	}
	return d
}

// opText names an operation, a recreate's delete and create as one.
func opText(e reconciler.OpLogEntry) string {
	if e.Recreate {
		return "recreate " + e.Ref.String()
	}
	return e.Op.String() + " " + e.Ref.String()
}
