package depgraph

// Clone returns a deep copy of g's whole tree (items are shared: they are
// immutable values). The copy has a new ID, and the same revision, journal
// and meta values (meta values are shared, not copied). It is how a dry run
// works on a current state without changing it.
func (g *Graph) Clone() *Graph {
	src := g.Root()
	r := &root{
		id:         graphIDs.Add(1),
		rev:        src.r.rev,
		nodes:      make(map[ItemRef]*node, len(src.r.nodes)),
		dependants: make(map[ItemRef]*refSet, len(src.r.dependants)),
		journal: journal{
			entries: append([]change(nil), src.r.journal.entries...),
			floor:   src.r.journal.floor,
		},
	}
	for k, v := range src.r.meta {
		if r.meta == nil {
			r.meta = make(map[string]any, len(src.r.meta))
		}
		r.meta[k] = v
	}
	for k, s := range src.r.dependants {
		c := &refSet{list: append([]ItemRef(nil), s.list...)}
		if s.idx != nil {
			c.idx = make(map[ItemRef]int, len(s.idx))
			for m, i := range s.idx {
				c.idx[m] = i
			}
		}
		r.dependants[k] = c
	}
	dst := cloneTree(src, nil, r)
	for ref, n := range src.r.nodes {
		cn := *n
		if n.owner != nil {
			cn.owner = dst.EditSubGraph(n.owner.Path())
			if cn.owner.members == nil {
				cn.owner.members = make(map[ItemRef]*node)
			}
			cn.owner.members[ref] = &cn
		}
		r.nodes[ref] = &cn
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
