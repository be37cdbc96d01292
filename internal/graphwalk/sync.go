package graphwalk

import (
	dg "github.com/netagent/netagent/depgraph"
)

// Sync makes dst hold exactly the items of src, each in the subgraph
// of the same path. Putting an item equal to the one present is not a
// change, so re-rendering an intent that changed a little costs the
// reconciler only the items that changed (a new intended graph instance
// every time would make every reconcile look at every item).
//
// src is a graph just rendered: its journal since revision 0 lists every
// item it holds, in no order, which spares sorting 100k references (see
// graphwalk.Nodes). An item equal to dst's, in the same subgraph, is left as it
// is without a Put (which would ask the item for its dependencies again).
// When dst ends up with as many items as src, it holds nothing else, and
// is not walked for items to delete; else its journal is, like src's.
func Sync(dst, src *dg.Graph) {
	subs := map[string]*dg.Graph{"": dst}
	created := dg.StateData{State: dg.StateCreated}
	for _, n := range Nodes(src) {
		ref, item, scope := n.Ref(), n.Item(), n.Scope()
		have := dst.Node(ref)
		if have != nil && have.Present() && have.Item().Equal(item) && have.Scope() == scope {
			continue
		}
		sub, ok := subs[scope]
		if !ok {
			sub = Into(dst, scope)
			subs[scope] = sub
		}
		if have == nil {
			have = dst.NodeFor(ref)
		}
		sub.PutAt(have, item, created)
	}
	if dst.Len() != src.Len() {
		for _, n := range Nodes(dst) {
			if !src.Contains(n.Ref()) {
				dst.DeleteNode(n)
			}
		}
	}
	pruneSubgraphs(dst, src)
}

// Into returns dst's subgraph at path ("" is dst itself).
func Into(dst *dg.Graph, path string) *dg.Graph {
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
