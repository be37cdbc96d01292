package host

import (
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
)

// IgnoredDrift is the drift-ignore rule, the one both drivers use (check,
// the daemon's check and status): a difference in the attributes of an
// item whose drift policy is ignore is not heard of, as the operator
// asked. An ignore item missing from the kernel is still a difference: an
// apply creates it.
func IgnoredDrift(d Difference, policies render.DriftPolicies) bool {
	return d.Kind == Differs && policies.Of(d.Ref) == intent.DriftIgnore
}

// WithoutIgnored returns the differences of diffs that IgnoredDrift does
// not leave out, and those it does, by item.
func WithoutIgnored(diffs []Difference, policies render.DriftPolicies) (kept []Difference, ignored []dg.ItemRef) {
	if len(policies) == 0 {
		return diffs, nil
	}
	kept = make([]Difference, 0, len(diffs))
	for _, d := range diffs {
		if IgnoredDrift(d, policies) {
			ignored = append(ignored, d.Ref)
			continue
		}
		kept = append(kept, d)
	}
	return kept, ignored
}
