package depgraph

import "slices"

// Clone returns a deep copy of g's whole tree (items are shared: they are
// immutable values). The copy has a new ID, and the same revision and
// journal. It is how a dry run works on a current state without changing
// it.
func (g *Graph) Clone() *Graph {
	src := g.Root()
	r := &root{
		id:      graphIDs.Add(1),
		rev:     src.r.rev,
		live:    src.r.live,
		types:   slices.Clone(src.r.types),
		nextIdx: src.r.nextIdx,
		free:    append([]int32(nil), src.r.free...),
	}
	dst := cloneTree(src, nil, r)
	// The same hashes in a table of the same size: each copy goes where
	// its original is.
	r.index = index{
		nodes:  make([]*Node, len(src.r.index.nodes)),
		hashes: slices.Clone(src.r.index.hashes),
		count:  src.r.index.count,
	}
	for i, n := range src.r.index.nodes {
		if n != nil {
			c := &Node{name: n.name, typ: n.typ, r: r, item: n.item, deps: n.deps, ndeps: n.ndeps, modRev: n.modRev, idx: n.idx, flags: n.flags & nodeExternal}
			c.setState(n.State())
			r.index.nodes[i] = c
		}
	}
	peer := func(n *Node) *Node { return r.index.get(n.typ, n.name, hashRef(n.typ, n.name)) }
	src.r.eachNode(func(n *Node) {
		c := peer(n)
		if o := n.ownerGraph(); o != nil {
			co := dst.EditSubGraph(o.Path())
			co.addMember(c)
			c.setOwner(co)
		}
		if req := n.required(); req != nil {
			creq := make([]*Node, len(req))
			for i, q := range req {
				creq[i] = peer(q)
			}
			c.setRequired(creq)
		}
		if list := n.dependantList(); list != nil {
			clist := make([]*Node, len(list))
			for i, d := range list {
				clist[i] = peer(d)
			}
			c.setDependants(clist)
		}
	})
	r.journal.floor = src.r.journal.floor
	r.journal.entries = make([]change, len(src.r.journal.entries))
	for i, e := range src.r.journal.entries {
		var c *Node
		if !e.node.dead() {
			c = peer(e.node)
		}
		if c == nil { // a forgotten node: keep a dead copy
			c = &Node{name: e.node.name, typ: e.node.typ, r: r, flags: nodeDead}
		}
		r.journal.entries[i] = change{e.rev, c}
	}
	return dst
}

func cloneTree(src, parent *Graph, r *root) *Graph {
	dst := &Graph{name: src.name, desc: src.desc, parent: parent, r: r, path: src.path}
	for name, s := range src.subs {
		if dst.subs == nil {
			dst.subs = make(map[string]*Graph, len(src.subs))
		}
		dst.subs[name] = cloneTree(s, dst, r)
	}
	return dst
}
