package depgraph

import "strings"

// SubGraph returns the direct subgraph of g with that name, or nil. A name
// with "/" walks down several levels ("a/b").
func (g *Graph) SubGraph(name string) *Graph {
	s := g
	for _, part := range strings.Split(name, "/") {
		if s == nil || s.subs == nil {
			return nil
		}
		s = s.subs[part]
	}
	return s
}

// EditSubGraph returns the subgraph with that name ("a/b" walks down),
// creating the missing levels. Items put into it belong to it; editing it
// edits g's tree in place.
func (g *Graph) EditSubGraph(name string) *Graph {
	s := g
	for rest, more := name, true; more; {
		var part string
		part, rest, more = strings.Cut(rest, "/")
		if s.subs == nil {
			s.subs = make(map[string]*Graph)
		}
		child := s.subs[part]
		if child == nil {
			child = &Graph{name: part, parent: s, r: s.r}
			child.path = child.makePath()
			s.subs[part] = child
		}
		s = child
	}
	return s
}

// SubGraphs returns g's direct subgraphs, ordered by name.
func (g *Graph) SubGraphs() []*Graph {
	out := make([]*Graph, 0, len(g.subs))
	for _, n := range sortedNames(g.subs) {
		out = append(out, g.subs[n])
	}
	return out
}

// DeleteSubGraph removes a direct subgraph and every item in it.
func (g *Graph) DeleteSubGraph(name string) bool {
	s := g.subs[name]
	if s == nil {
		return false
	}
	for _, ref := range s.Refs() {
		s.Delete(ref)
	}
	g.r.releaseOwners(s)
	delete(g.subs, name)
	return true
}

// ItemAsSubGraph returns a view of g that holds only the item ref (if g
// holds it). Reconciling such a view reconciles just that item.
func (g *Graph) ItemAsSubGraph(ref ItemRef) *Graph {
	v := &Graph{name: ref.String(), parent: g, r: g.r, only: &ref}
	v.path = v.makePath()
	return v
}

// ScopeOf returns the path of the subgraph that directly holds the item
// ("" for the root), and whether the item exists.
func (g *Graph) ScopeOf(ref ItemRef) (string, bool) {
	n := g.r.node(ref)
	if n == nil || n.item == nil {
		return "", false
	}
	return n.Scope(), true
}

// Scope returns the path of the subgraph that directly holds the node's
// item ("" for the root).
func (n *Node) Scope() string {
	o := n.ownerGraph()
	if o == nil {
		return ""
	}
	return o.Path()
}

// HasSubGraphs reports whether g has subgraphs.
func (g *Graph) HasSubGraphs() bool { return len(g.subs) > 0 }

// SingleItem reports whether g is an item view made by ItemAsSubGraph, and
// of which item.
func (g *Graph) SingleItem() (ItemRef, bool) {
	if g.only == nil {
		return ItemRef{}, false
	}
	return *g.only, true
}
