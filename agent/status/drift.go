package status

import (
	"slices"
	"strings"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// DriftStatuses lists the report items a drift check found drifted
// (reported), against their intended value in intended, sorted.
func DriftStatuses(reported map[dg.ItemRef]host.Drift, intended *dg.Graph) []DriftStatus {
	var out []DriftStatus
	for ref, f := range reported {
		ds := DriftStatus{Item: ref.String(), File: FileOf(intended, ref), What: f.What()}
		want, ok := intended.Get(ref)
		if !ok {
			want = f.Old
		}
		if f.New != nil {
			ds.Fields = driftFields(host.DiffFields(want, f.New))
		}
		out = append(out, ds)
	}
	slices.SortFunc(out, func(x, y DriftStatus) int { return strings.Compare(x.Item, y.Item) })
	return out
}

func driftFields(fields []host.FieldDiff) []DriftField {
	var out []DriftField
	for _, f := range fields {
		out = append(out, DriftField{Field: f.Field, Intended: f.Want, Running: f.Have})
	}
	return out
}

// Differing lists, for a check, the items of rep (the read-back
// compared with intended) whose attributes differ, and the ignore items
// among them by the policies pol, which it leaves out: their policy says
// not to hear of them.
func Differing(rep *host.Report, intended *dg.Graph, pol render.DriftPolicies) (out []DriftStatus, ignored map[dg.ItemRef]bool) {
	for _, d := range rep.Diffs {
		if d.Kind != host.Differs {
			continue
		}
		p := pol.Of(d.Ref)
		if p == intent.DriftIgnore {
			if ignored == nil {
				ignored = map[dg.ItemRef]bool{}
			}
			ignored[d.Ref] = true
			continue
		}
		ds := DriftStatus{Item: d.Ref.String(), File: FileOf(intended, d.Ref), What: "changed", Fields: driftFields(d.Fields)}
		if p != intent.DriftRepair {
			ds.Policy = p
		}
		out = append(out, ds)
	}
	return out, ignored
}

// WithoutOps returns log without the operations on the items of skip.
func WithoutOps(log reconciler.OperationLog, skip map[dg.ItemRef]bool) reconciler.OperationLog {
	if len(skip) == 0 {
		return log
	}
	out := make(reconciler.OperationLog, 0, len(log))
	for _, e := range log {
		if !skip[e.Ref] {
			out = append(out, e)
		}
	}
	return out
}
