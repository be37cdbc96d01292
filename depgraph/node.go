package depgraph

// Node is the place of one reference in one graph: the item there (nil
// while the reference is only required by others, or looked at), its state
// data, and links to the nodes it requires and that require it. Nodes let
// an algorithm that walks dependencies (the reconciler) follow pointers
// instead of looking every reference up again.
//
// A node whose item is deleted stays valid while other nodes require it or
// while its graph is held (Hold); otherwise it is dropped from the graph and
// Dead reports true: look the reference up again with NodeFor.
type Node struct {
	ref        ItemRef
	r          *root
	item       Item
	deps       []Dependency
	req        []*Node // the nodes of deps[i].RequiredItem, in the same graph
	dependants nodeSet
	state      StateData
	owner      *Graph
	modRev     uint64 // revision at which the value last changed in place
	peer       *Node  // cached: the node of the same reference in another graph
	dead       bool
	idx        int // see Index
}

// Index is a small number that no other live node of the same root graph
// has: from 0 up to about the most nodes the graph held at once (the
// number of a dropped node is given to a later one). An algorithm keeps
// its own data about the nodes of one graph in a slice by Index, instead
// of a map. It means nothing once the node is Dead; while the graph is
// held (Hold), no node is dropped, so no number is given again.
func (n *Node) Index() int { return n.idx }

// Ref returns the node's reference.
func (n *Node) Ref() ItemRef { return n.ref }

// Item returns the item, or nil if the reference has none in this graph.
func (n *Node) Item() Item { return n.item }

// Present reports whether the node holds an item.
func (n *Node) Present() bool { return n.item != nil }

// State returns the state data recorded next to the item.
func (n *Node) State() StateData { return n.state }

// Dependencies returns the item's dependencies (nil without an item).
func (n *Node) Dependencies() []Dependency { return n.deps }

// Required returns the nodes of the required items, in the same order as
// Dependencies, in the same graph. The slice belongs to the graph.
func (n *Node) Required() []*Node { return n.req }

// Dependants returns the nodes whose items depend on this reference, in
// no particular order. The slice belongs to the graph and is valid until
// the next change.
func (n *Node) Dependants() []*Node { return n.dependants.list }

// Dead reports whether the node was dropped from its graph.
func (n *Node) Dead() bool { return n.dead }

// In returns the node of the same reference in g (created empty if g has
// none; n itself if n is g's), caching the answer so that the next call is
// a pointer read.
func (n *Node) In(g *Graph) *Node { return n.in(g.r) }

func (n *Node) in(r *root) *Node {
	if n.r == r {
		return n
	}
	if p := n.peer; p != nil && p.r == r && !p.dead {
		return p
	}
	p := r.nodeFor(n.ref)
	n.peer = p
	if p.peer == nil || p.peer.dead {
		p.peer = n
	}
	return p
}

// nodeSet is a set of nodes that keeps insertion order; past a threshold it
// adds an index so that removal stays O(1) for hubs with many dependants.
type nodeSet struct {
	list []*Node
	idx  map[*Node]int
}

const nodeSetIndexThreshold = 16

func (s *nodeSet) add(n *Node) {
	if s.has(n) {
		return
	}
	s.list = append(s.list, n)
	if s.idx != nil {
		s.idx[n] = len(s.list) - 1
	} else if len(s.list) > nodeSetIndexThreshold {
		s.idx = make(map[*Node]int, len(s.list)*2)
		for i, m := range s.list {
			s.idx[m] = i
		}
	}
}

func (s *nodeSet) has(n *Node) bool {
	if s.idx != nil {
		_, ok := s.idx[n]
		return ok
	}
	for _, m := range s.list {
		if m == n {
			return true
		}
	}
	return false
}

// remove deletes n by moving the last member into its place.
func (s *nodeSet) remove(n *Node) {
	i := -1
	if s.idx != nil {
		if j, ok := s.idx[n]; ok {
			i = j
			delete(s.idx, n)
		}
	} else {
		for j, m := range s.list {
			if m == n {
				i = j
				break
			}
		}
	}
	if i < 0 {
		return
	}
	last := len(s.list) - 1
	if i != last {
		s.list[i] = s.list[last]
		if s.idx != nil {
			s.idx[s.list[i]] = i
		}
	}
	s.list[last] = nil
	s.list = s.list[:last]
	if len(s.list) == 0 {
		s.list, s.idx = nil, nil
	}
}

func (s *nodeSet) len() int { return len(s.list) }

// Peer returns the node of the same reference in g if g has one (without
// creating it), caching the answer.
func (n *Node) Peer(g *Graph) *Node {
	if p := n.peer; p != nil && p.r == g.r && !p.dead {
		return p
	}
	p := g.r.nodes[n.ref]
	if p != nil {
		n.peer = p
		if p.peer == nil || p.peer.dead {
			p.peer = n
		}
	}
	return p
}
