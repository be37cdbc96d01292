package host

import (
	"fmt"
	"slices"

	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// PredictOps says what each operation of ops (one pass of a plan, in order)
// does to traffic (configurators.Predict), before being the state the pass
// starts from: the value a modify changes comes from it. It does not know
// what a physical NIC leaving the intent gets back (see PredictOpsFound).
func PredictOps(ops reconciler.OperationLog, before *dg.Graph) []disrupt.Prediction {
	return PredictOpsFound(ops, before, nil)
}

// PredictOpsFound is PredictOps knowing what the physical NICs netagent
// changed had before it (link.ReadFound, Runtime.Found; nil: not known):
// what each gets back when it leaves the intent (a NIC found down is set
// down again).
//
// A port's operation is predicted from the ports as the operations before
// it in the pass leave them (the last of a bridge's ports to leave takes
// its carrier, also when several leave in one pass).
func PredictOpsFound(ops reconciler.OperationLog, before *dg.Graph, found link.Found) []disrupt.Prediction {
	out := make([]disrupt.Prediction, len(ops))
	var ports *dg.Graph // before with the port operations so far
	for i, e := range ops {
		if _, isPort := e.Item.(*items.Port); !isPort {
			out[i] = configurators.PredictFound(e, before, found)
			continue
		}
		if ports == nil {
			ports = configurators.PredictInputs(before)
		}
		out[i] = configurators.PredictFound(e, ports, found)
		switch {
		case e.Err != nil:
		case e.Op == reconciler.OpDelete:
			ports.Delete(e.Ref)
		default:
			ports.Put(e.Item)
		}
	}
	return out
}

// Found reads what the physical NICs netagent changed had before it, from
// the state directory: what each gets back when it leaves the intent. The
// plan's predictions need it (PredictOpsFound).
func (r *Runtime) Found() (link.Found, error) {
	found, err := r.ns.ReadFound(r.stateDir)
	if err != nil {
		return nil, fmt.Errorf("reading the settings of the NICs as found: %w", err)
	}
	return found, nil
}

// found is Found, or nil (not known: the predictions say what may
// happen) with a warning.
func (r *Runtime) found() link.Found {
	found, err := r.Found()
	if err != nil {
		r.log.WithError(err).Warn("plan: predicting the NICs' restores without their found settings")
	}
	return found
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
	// Neighbours are the static neighbour entries the plan withdraws, for
	// the duration (a recreate) or for good, and those the kernel flushes
	// by itself as an operation runs (a link set down), in plan order.
	Neighbours []WithdrawnNeighbour
}

// WithdrawnNeighbour is one neighbour entry withdrawn, by an operation of
// the plan or by the kernel after one.
type WithdrawnNeighbour struct {
	// Neighbour is the item: "neighbor/eth0/192.0.2.1".
	Neighbour string
	// Effect is disrupt.Withdrawn (it comes back) or disrupt.Removed.
	Effect disrupt.Effect
	// Cause is the operation ("delete neighbor/eth0/192.0.2.1"), or "the
	// kernel, after modify interface/eth0" ("the kernel, possibly, after
	// ..." when it depends on what the kernel decides).
	Cause string
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
	seenRoute, seenNeigh := map[string]bool{}, map[string]bool{}
	for i, e := range ops {
		if i >= len(preds) || e.Err != nil {
			continue
		}
		p := preds[i]
		what := opText(e)
		for _, l := range p.LinksDown {
			effect := linkEffect(e, p, l)
			j, ok := byLink[l]
			if !ok {
				j = len(d.LinksDown)
				byLink[l] = j
				d.LinksDown = append(d.LinksDown, LinkDown{Link: l, Effect: effect, Certain: p.Certain})
			}
			ld := &d.LinksDown[j]
			w := disrupt.Worse(disrupt.Prediction{Effect: ld.Effect, Certain: ld.Certain}, disrupt.Prediction{Effect: effect, Certain: p.Certain})
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
		withdraws := p.Effect == disrupt.Withdrawn || p.Effect == disrupt.Removed
		if e.Ref.Type == items.TypeRoute && withdraws && !seenRoute[e.Ref.String()] {
			seenRoute[e.Ref.String()] = true
			d.Withdrawn = append(d.Withdrawn, WithdrawnRoute{Route: e.Ref.String(), Effect: p.Effect, Cause: what})
		}
		if e.Ref.Type == items.TypeNeighbor && withdraws && !seenNeigh[e.Ref.String()] {
			seenNeigh[e.Ref.String()] = true
			d.Neighbours = append(d.Neighbours, WithdrawnNeighbour{Neighbour: e.Ref.String(), Effect: p.Effect, Cause: what})
		}
	}
	for _, s := range effects {
		if s.After != nil {
			continue
		}
		ref, cause := s.Ref.String(), "the kernel, after "+s.Cause
		switch {
		case s.Ref.Type == items.TypeRoute && !seenRoute[ref]:
			seenRoute[ref] = true
			d.Withdrawn = append(d.Withdrawn, WithdrawnRoute{Route: ref, Effect: disrupt.Withdrawn, Cause: cause})
		case s.Ref.Type == items.TypeNeighbor && !seenNeigh[ref]:
			seenNeigh[ref] = true
			if !s.Certain {
				cause = "the kernel, possibly, after " + s.Cause
			}
			d.Neighbours = append(d.Neighbours, WithdrawnNeighbour{Neighbour: ref, Effect: disrupt.Withdrawn, Cause: cause})
		}
	}
	return d
}

// linkEffect is what operation e (predicted as p) does to link l, one of
// the links it takes down: the operation's own effect, but for the master
// of a port, which loses its carrier (down) when its last port leaves,
// whatever happens to the port.
func linkEffect(e reconciler.OpLogEntry, p disrupt.Prediction, l string) disrupt.Effect {
	if port, ok := e.Item.(*items.Port); ok && l != port.IfName {
		return disrupt.Down
	}
	return p.Effect
}

// opText names an operation, a recreate's delete and create as one.
func opText(e reconciler.OpLogEntry) string {
	if e.Recreate {
		return "recreate " + e.Ref.String()
	}
	return e.Op.String() + " " + e.Ref.String()
}
