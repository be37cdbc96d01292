package status

import (
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/internal/disrupt"
)

// SummaryOf is d as it is printed and sent (its lists empty, not nil,
// when nothing goes down).
func SummaryOf(d host.Disruption) DisruptionSummary {
	out := DisruptionSummary{LinksDown: []LinkDown{}, RoutesWithdrawn: []RouteWithdrawn{}, NeighborsWithdrawn: []NeighborWithdrawn{}}
	for _, l := range d.LinksDown {
		out.LinksDown = append(out.LinksDown, LinkDown{Link: l.Link, Effect: string(l.Effect), Certain: l.Certain, Operations: l.Operations})
	}
	for _, w := range d.Withdrawn {
		out.RoutesWithdrawn = append(out.RoutesWithdrawn, RouteWithdrawn{Route: w.Route, Effect: string(w.Effect), Cause: w.Cause})
	}
	for _, w := range d.Neighbours {
		out.NeighborsWithdrawn = append(out.NeighborsWithdrawn, NeighborWithdrawn{Neighbor: w.Neighbour, Effect: string(w.Effect), Cause: w.Cause})
	}
	return out
}

func DisruptionOf(p disrupt.Prediction) *Disruption {
	return &Disruption{Effect: string(p.Effect), Certain: p.Certain, LinksDown: p.LinksDown, Why: p.Why}
}
