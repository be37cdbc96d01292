package depgraph

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
		nodes: make(map[ItemRef]*Node, len(src.r.nodes)),
	}
	dst := cloneTree(src, nil, r)
	for ref, n := range src.r.nodes {
		c := &Node{ref: ref, r: r, item: n.item, deps: n.deps, modRev: n.modRev, idx: n.idx}
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
		if n.req != nil {
			c.req = make([]*Node, len(n.req))
			for i, q := range n.req {
				c.req[i] = r.nodes[q.ref]
			}
		}
		if n.dependants != nil {
			c.dependants = make([]*Node, len(n.dependants))
			for i, d := range n.dependants {
				c.dependants[i] = r.nodes[d.ref]
			}
		}
	}
	r.journal.floor = src.r.journal.floor
	r.journal.entries = make([]change, len(src.r.journal.entries))
	for i, e := range src.r.journal.entries {
		c := r.nodes[e.node.ref]
		if c == nil || e.node.dead() { // a forgotten node: keep a dead copy
			c = &Node{ref: e.node.ref, r: r, flags: nodeDead}
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
