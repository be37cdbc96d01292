package agent

import (
	"github.com/netagent/netagent/agent/target"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// Disruption is what a planned operation does to traffic (see
// target.PredictOps): Effect is "none", "atomic", "detach", "withdrawn",
// "flap", "down", "recreate" or "removed"; Certain is false when it
// depends on the kernel or the driver; LinksDown are the links it takes
// down.
type Disruption struct {
	Effect    string   `json:"effect"`
	Certain   bool     `json:"certain"`
	LinksDown []string `json:"linksDown,omitempty"`
	Why       string   `json:"why,omitempty"`
}

// withDisruption gives each of ops (opResults of log) what it does to
// traffic, from before, the state the plan starts from.
func withDisruption(ops []OpResult, log reconciler.OperationLog, before *dg.Graph) []OpResult {
	for i, p := range target.PredictOps(log, before) {
		if i < len(ops) {
			ops[i].Disruption = &Disruption{Effect: string(p.Effect), Certain: p.Certain, LinksDown: p.LinksDown, Why: p.Why}
		}
	}
	return ops
}
