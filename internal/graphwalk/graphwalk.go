// Package graphwalk lists the nodes of a depgraph root graph without
// sorting them: a walk over 100k items after every reconcile (syncing the
// intended graph, counting the items' states for status) should not pay
// for sorting their references. Sync, built on the walk, keeps the
// daemon's intended graph in step with each new render, changing only the
// items that changed.
package graphwalk

import dg "github.com/netagent/netagent/depgraph"

// Nodes returns the nodes of the items of g, a root graph, each once,
// in no order: from its journal since revision 0, when that still lists
// them all (every item put was journaled, unless put WithoutJournal;
// compacting keeps the latest change of every reference), checked by
// their count; else the nodes of g.Refs(), which sorts them.
func Nodes(g *dg.Graph) []*dg.Node {
	if changed, ok := g.NodesChangedSince(0); ok && g.IsRoot() {
		top := -1
		for _, n := range changed {
			if n.Present() {
				top = max(top, n.Index())
			}
		}
		seen := make([]bool, top+1) // by Index: no two present nodes share one
		out := changed[:0]
		for _, n := range changed {
			if n.Present() && !seen[n.Index()] {
				seen[n.Index()] = true
				out = append(out, n)
			}
		}
		if len(out) == g.Len() {
			return out
		}
	}
	refs := g.Refs()
	nodes := make([]*dg.Node, len(refs))
	for i, ref := range refs {
		nodes[i] = g.Node(ref)
	}
	return nodes
}
