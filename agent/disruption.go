package agent

import (
	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// nicsFound is a Kernel that knows what the physical NICs netagent
// changed had before it (host.Kernel: the state directory's record,
// link.ReadFound; nil when not known), which a NIC leaving the intent gets
// back: the daemon's predictions are then the one-shot plan's.
type nicsFound interface {
	Found() link.Found
}

// found is what the physical NICs had before netagent, when the Kernel
// knows (nil otherwise: a NIC's restore is predicted as what may happen).
// Read before a reconcile: a restore forgets it.
func (a *Agent) found() link.Found {
	if k, ok := a.cfg.Kernel.(nicsFound); ok {
		return k.Found()
	}
	return nil
}

// withDisruption gives each of ops (api.OpResults of log) what it does to
// traffic, from before, the state the plan starts from, and found, what
// the NICs had before netagent (a.found), as the one-shot plan predicts
// it (host.PredictOpsFound); and returns the summary of the plan's
// disruption (host.SummarizeDisruption), nil without operations.
func withDisruption(ops []api.OpResult, log reconciler.OperationLog, before *dg.Graph, found link.Found) ([]api.OpResult, *status.DisruptionSummary) {
	preds := host.PredictOpsFound(log, before, found)
	for i, p := range preds {
		if i < len(ops) {
			ops[i].Disruption = status.DisruptionOf(p)
		}
	}
	if len(log) == 0 {
		return ops, nil
	}
	d := status.SummaryOf(host.SummarizeDisruption(log, preds, nil))
	return ops, &d
}
