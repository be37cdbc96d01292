package api

import (
	"maps"
	"slices"

	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// OpResults are the operations of a reconciler's log, as answered.
func OpResults(log reconciler.OperationLog) []OpResult {
	out := make([]OpResult, 0, len(log))
	for _, e := range log {
		r := OpResult{Op: e.Op.String(), Item: e.Ref.String(), Recreate: e.Recreate, InProgress: e.InProgress}
		if e.Item != nil {
			r.Value = e.Item.String()
		}
		if e.Err != nil {
			r.Error = e.Err.Error()
		}
		out = append(out, r)
	}
	return out
}

// BlockedItems are the items a reconcile could not create, with why, in
// the order of their references.
func BlockedItems(m map[dg.ItemRef]string) []BlockedItem {
	out := make([]BlockedItem, 0, len(m))
	for _, ref := range slices.SortedFunc(maps.Keys(m), dg.ItemRef.Compare) {
		out = append(out, BlockedItem{Item: ref.String(), Reason: m[ref]})
	}
	return out
}

// ShowItems are the items of g (the current state), each with the file
// that declares it.
func ShowItems(g *dg.Graph) []ShownItem {
	var out []ShownItem
	for _, ref := range g.Refs() {
		it, st, _ := g.Lookup(ref)
		out = append(out, ShownItem{Item: ref.String(), Value: it.String(), State: st.State.String(),
			External: it.External(), File: status.FileOf(g, ref)})
	}
	return out
}
