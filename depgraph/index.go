package depgraph

import (
	"math"
	"slices"
	"strings"
)

// The index of a root graph finds a node by reference: one map by name per
// item type (root.nodes, by the type's number, Node.typ). A graph holds few
// types, so a reference's type is found by a scan of root.types (the type
// last found first); the map's key is the name alone, which costs less to
// hash and to store (a slot of 24 bytes) than the whole reference.

// findType returns the number of an item type, if the graph has it.
func (r *root) findType(typ string) (uint16, bool) {
	if int(r.lastType) < len(r.types) && r.types[r.lastType] == typ {
		return r.lastType, true
	}
	for i, t := range r.types {
		if t == typ {
			r.lastType = uint16(i)
			return uint16(i), true
		}
	}
	return 0, false
}

// typeID returns the number of an item type in r.types, adding it if new.
func (r *root) typeID(typ string) uint16 {
	if t, ok := r.findType(typ); ok {
		return t
	}
	if len(r.types) > math.MaxUint16 {
		panic("depgraph: more than 65536 item types in one graph")
	}
	r.types = append(r.types, typ)
	r.nodes = append(r.nodes, make(map[string]*Node))
	r.lastType = uint16(len(r.types) - 1)
	return r.lastType
}

// node returns the node of ref, or nil.
func (r *root) node(ref ItemRef) *Node {
	t, ok := r.findType(ref.Type)
	if !ok {
		return nil
	}
	return r.nodes[t][ref.Name]
}

func (r *root) nodeFor(ref ItemRef) *Node {
	t := r.typeID(ref.Type)
	m := r.nodes[t]
	n := m[ref.Name]
	if n == nil {
		n = r.newNode()
		n.name, n.typ, n.r = ref.Name, t, r
		if r.reserve > 0 && len(m) == reserveAt {
			m = r.grow(t, r.reserve)
		}
		m[ref.Name] = n
		r.count++
		if r.held > 0 {
			r.empties = append(r.empties, n)
		}
	}
	return n
}

// reserveAt is the size at which a type's map takes what Reserve set
// aside: by then the type is one of the graph's large ones.
const reserveAt = 512

// grow makes room in the map of type t for n more nodes, and returns it.
func (r *root) grow(t uint16, n int) map[string]*Node {
	old := r.nodes[t]
	m := make(map[string]*Node, len(old)+n)
	for name, node := range old {
		m[name] = node
	}
	r.nodes[t] = m
	r.reserve = max(r.reserve-n, 0)
	return m
}

// forget removes n from the index.
func (r *root) forget(n *Node) {
	delete(r.nodes[n.typ], n.name)
	r.count--
}

// Reserve prepares g's tree for about n more nodes (a reconciler about to
// create a whole intended graph, a renderer about to put many items), so
// that the index does not grow step by step. As the index has a map per
// item type, the room goes to the first type that grows large (see
// ReserveType to say which).
func (g *Graph) Reserve(n int) {
	if n < 1024 {
		return
	}
	g.r.reserve = n
}

// ReserveType prepares g's tree for about n more nodes of type typ.
func (g *Graph) ReserveType(typ string, n int) {
	r := g.r
	t := r.typeID(typ)
	if n <= 2*len(r.nodes[t]) || n < 64 {
		return
	}
	reserve := r.reserve
	r.grow(t, n)
	r.reserve = reserve
}

// ReserveLike prepares g's tree for the items of other: for each item type,
// room for as many more nodes as other's tree holds.
func (g *Graph) ReserveLike(other *Graph) {
	for t, m := range other.r.nodes {
		if len(m) > 0 {
			g.ReserveType(other.r.types[t], len(m))
		}
	}
}

// eachNode calls f for every node of the index, in no particular order.
func (r *root) eachNode(f func(*Node)) {
	for _, m := range r.nodes {
		for _, n := range m {
			f(n)
		}
	}
}

// sortNodes orders nodes by reference: type, then name.
func (r *root) sortNodes(nodes []*Node) {
	rank := r.typeRanks()
	slices.SortFunc(nodes, func(a, b *Node) int {
		if a.typ != b.typ {
			return int(rank[a.typ]) - int(rank[b.typ])
		}
		return strings.Compare(a.name, b.name)
	})
}

// typeRanks returns, by type number, the place of the type's name in the
// sorted list of the types.
func (r *root) typeRanks() []uint16 {
	order := make([]uint16, len(r.types))
	for i := range order {
		order[i] = uint16(i)
	}
	slices.SortFunc(order, func(a, b uint16) int { return strings.Compare(r.types[a], r.types[b]) })
	rank := make([]uint16, len(r.types))
	for pos, t := range order {
		rank[t] = uint16(pos)
	}
	return rank
}
