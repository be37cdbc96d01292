package depgraph

import "slices"

// Clone returns a deep copy of g's whole tree (items are shared: they are
// immutable values). The copy has a new ID, and the same revision and
// journal. It is how a dry run works on a current state without changing
// it.
func (g *Graph) Clone() *Graph {
	src := g.Root()
	r := &root{
		id:    graphIDs.Add(1),
		rev:   src.r.rev,
		live:  src.r.live,
		types: slices.Clone(src.r.types),
		nodes: make(map[ItemRef]*Node, len(src.r.nodes)),
	}
	dst := cloneTree(src, nil, r)
	for ref, n := range src.r.nodes {
		c := &Node{name: ref.Name, typ: n.typ, r: r, item: n.item, deps: n.deps, modRev: n.modRev, idx: n.idx}
		c.setState(n.State())
		r.nodes[ref] = c
	}
	r.nextIdx = src.r.nextIdx
	r.free = append([]int32(nil), src.r.free...)
	for ref, n := range src.r.nodes {
		c := r.nodes[ref]
		if n.owner != nil {
			c.owner = dst.EditSubGraph(n.owner.Path())
			if c.owner.members == nil {
				c.owner.members = make(map[ItemRef]*Node)
			}
			c.owner.members[ref] = c
		}
		if req := n.required(); req != nil {
			creq := make([]*Node, len(req))
			for i, q := range req {
				creq[i] = r.nodes[q.Ref()]
			}
			c.setRequired(creq)
		}
		if n.dependants != nil {
			c.dependants = make([]*Node, len(n.dependants))
			for i, d := range n.dependants {
				c.dependants[i] = r.nodes[d.Ref()]
			}
		}
	}
	r.journal.floor = src.r.journal.floor
	r.journal.entries = make([]change, len(src.r.journal.entries))
	for i, e := range src.r.journal.entries {
		c := r.nodes[e.node.Ref()]
		if c == nil || e.node.dead() { // a forgotten node: keep a dead copy
			c = &Node{name: e.node.name, typ: e.node.typ, r: r, flags: nodeDead}
		}
		r.journal.entries[i] = change{e.rev, c}
	}
	return dst
}

func cloneTree(src, parent *Graph, r *root) *Graph {
	dst := &Graph{name: src.name, desc: src.desc, parent: parent, r: r}
	for name, s := range src.subs {
		if dst.subs == nil {
			dst.subs = make(map[string]*Graph, len(src.subs))
		}
		dst.subs[name] = cloneTree(s, dst, r)
	}
	return dst
}
