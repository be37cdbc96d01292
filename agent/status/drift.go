package status

import (
	"slices"
	"strings"

	"github.com/netagent/netagent/agent/host"
	dg "github.com/netagent/netagent/depgraph"
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
