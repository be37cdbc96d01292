package agent

import (
	dg "github.com/netagent/netagent/depgraph"
)

// syncGraph makes dst hold exactly the items of src, each in the subgraph
// of the same path. Putting an item equal to the one present is not a
// change, so re-rendering an intent that changed a little costs the
// reconciler only the items that changed (a new intended graph instance
// every time would make every reconcile look at every item).
func syncGraph(dst, src *dg.Graph) {
	for _, ref := range src.Refs() {
		item, _ := src.Get(ref)
		scope, _ := src.ScopeOf(ref)
		into(dst, scope).Put(item)
	}
	for _, ref := range dst.Refs() {
		if !src.Contains(ref) {
			dst.Delete(ref)
		}
	}
	pruneSubgraphs(dst, src)
}

// into returns dst's subgraph at path ("" is dst itself).
func into(dst *dg.Graph, path string) *dg.Graph {
	if path == "" {
		return dst
	}
	return dst.EditSubGraph(path)
}

// pruneSubgraphs deletes the subgraphs of dst that src does not have.
func pruneSubgraphs(dst, src *dg.Graph) {
	for _, sub := range dst.SubGraphs() {
		other := src.SubGraph(sub.Name())
		if other == nil {
			dst.DeleteSubGraph(sub.Name())
			continue
		}
		pruneSubgraphs(sub, other)
	}
}
