package render

import (
	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
)

// DriftPolicies is the drift policy (intent.DriftPolicy) of the items
// whose policy is not repair: every item of an object takes the object's
// policy (an interface's port, addresses and VLANs take the interface's).
// Like protection, a policy is not a kernel attribute: it stays out of the
// items, so that changing it changes no item and writes nothing, and goes
// along beside the graph. A nil DriftPolicies says repair for every item.
type DriftPolicies map[dg.ItemRef]intent.DriftPolicy

// Of returns the policy of ref: repair unless listed.
func (p DriftPolicies) Of(ref dg.ItemRef) intent.DriftPolicy {
	if d, ok := p[ref]; ok {
		return d
	}
	return intent.DriftRepair
}

// DriftOf returns the drift policies of the items RenderFiles(files)
// renders; nil, at the cost of a look at every object, when no file says
// "drift" other than "repair". The error is RenderFiles'.
func DriftOf(files map[string]*intent.Intent) (DriftPolicies, error) {
	uses := false
	for _, in := range files {
		if in != nil && in.UsesDrift() {
			uses = true
			break
		}
	}
	if !uses {
		return nil, nil
	}
	merged, err := intent.Merge(files)
	if err != nil {
		return nil, err
	}
	return driftOfMerged(merged)
}

// DriftOfIntent is DriftOf for one intent, not merged.
func DriftOfIntent(in *intent.Intent) (DriftPolicies, error) {
	if !in.UsesDrift() {
		return nil, nil
	}
	return driftOfMerged(in)
}

func driftOfMerged(in *intent.Intent) (DriftPolicies, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	b, err := build(in, Facts{}, true)
	if err != nil {
		return nil, err
	}
	return b.drifts, nil
}
