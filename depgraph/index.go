package depgraph

import (
	"hash/maphash"
	"math"
	"slices"
	"strings"
)

// index finds the nodes of a root graph by reference. It is a hash table
// with open addressing (linear probing, at most 7/8 full) that holds node
// pointers and a 32-bit hash of each: 12 bytes a slot, where a Go map keyed
// by the reference took 40 (and a map per type keyed by the name, 24). The
// node holds its reference (Node.typ, Node.name), so the table needs no
// copy of it; the stored hash spares most probes a visit to the node and
// lets the table grow without hashing the names again.
type index struct {
	nodes  []*Node  // a power of two long (or empty); nil is a free slot
	hashes []uint32 // the hash of nodes[i] (see hashRef)
	count  int      // the nodes in the table
}

var indexSeed = maphash.MakeSeed()

// hashRef hashes a reference given by its type's number in the root.
func hashRef(typ uint16, name string) uint32 {
	h := maphash.String(indexSeed, name) ^ uint64(typ)*0x9e3779b97f4a7c15
	return uint32(h) ^ uint32(h>>32)
}

// get returns the node of (typ, name), or nil.
func (x *index) get(typ uint16, name string, h uint32) *Node {
	if len(x.nodes) == 0 {
		return nil
	}
	mask := uint32(len(x.nodes) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		n := x.nodes[i]
		if n == nil {
			return nil
		}
		if x.hashes[i] == h && n.typ == typ && n.name == name {
			return n
		}
	}
}

// add puts n, whose hash is h, in the table; n must not be in it.
func (x *index) add(n *Node, h uint32) {
	if (x.count+1)*8 > len(x.nodes)*7 {
		x.resize(max(2*len(x.nodes), 64))
	}
	x.place(n, h)
	x.count++
}

func (x *index) place(n *Node, h uint32) {
	mask := uint32(len(x.nodes) - 1)
	i := h & mask
	for x.nodes[i] != nil {
		i = (i + 1) & mask
	}
	x.nodes[i], x.hashes[i] = n, h
}

// remove takes n, whose hash is h, out of the table. The nodes after it
// in its run move back, so that no probe stops short of them.
func (x *index) remove(n *Node, h uint32) {
	mask := uint32(len(x.nodes) - 1)
	i := h & mask
	for x.nodes[i] != n {
		if x.nodes[i] == nil {
			return
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; x.nodes[j] != nil; j = (j + 1) & mask {
		// The node at j may fill the hole at i unless its home slot
		// lies cyclically in (i, j].
		if home := x.hashes[j] & mask; (j-home)&mask >= (j-i)&mask {
			x.nodes[i], x.hashes[i] = x.nodes[j], x.hashes[j]
			i = j
		}
	}
	x.nodes[i], x.hashes[i] = nil, 0
	x.count--
}

// reserve makes room for n more nodes without growing.
func (x *index) reserve(n int) {
	need := x.count + n
	if need*8 <= len(x.nodes)*7 {
		return
	}
	size := max(len(x.nodes), 64)
	for size*7 < need*8 {
		size *= 2
	}
	x.resize(size)
}

func (x *index) resize(size int) {
	nodes, hashes := x.nodes, x.hashes
	x.nodes, x.hashes = make([]*Node, size), make([]uint32, size)
	for i, n := range nodes {
		if n != nil {
			x.place(n, hashes[i])
		}
	}
}

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
	r.lastType = uint16(len(r.types) - 1)
	return r.lastType
}

// node returns the node of ref, or nil.
func (r *root) node(ref ItemRef) *Node {
	t, ok := r.findType(ref.Type)
	if !ok {
		return nil
	}
	return r.index.get(t, ref.Name, hashRef(t, ref.Name))
}

func (r *root) nodeFor(ref ItemRef) *Node {
	t := r.typeID(ref.Type)
	h := hashRef(t, ref.Name)
	n := r.index.get(t, ref.Name, h)
	if n == nil {
		n = r.newNode()
		n.name, n.typ, n.r = ref.Name, t, r
		r.index.add(n, h)
		if r.held > 0 {
			r.empties = append(r.empties, n)
		}
	}
	return n
}

// forget removes n from the index.
func (r *root) forget(n *Node) { r.index.remove(n, hashRef(n.typ, n.name)) }

// Reserve prepares g's tree for about n more nodes (a reconciler about to
// create a whole intended graph, a renderer about to put many items), so
// that the index (and the journal, for journaled changes, and the list of
// new nodes a Hold keeps for its Release) does not grow step by step.
func (g *Graph) Reserve(n int) {
	r := g.r
	r.index.reserve(n)
	if r.unjournaled == 0 && n > 0 {
		r.journal.entries = slices.Grow(r.journal.entries, n)
	}
	if r.held > 0 && n > 0 { // each new node is listed until Release
		r.empties = slices.Grow(r.empties, n)
	}
}

// eachNode calls f for every node of the index, in no particular order.
func (r *root) eachNode(f func(*Node)) {
	for _, n := range r.index.nodes {
		if n != nil {
			f(n)
		}
	}
}

// sortNodes orders nodes by reference: type, then name. It sorts keys
// that hold what the comparison needs (the type's rank, the name), so that
// the sort does not visit the nodes.
func (r *root) sortNodes(nodes []*Node) {
	rank := r.typeRanks()
	keys := make([]sortKey, len(nodes))
	for i, n := range nodes {
		keys[i] = sortKey{rank[n.typ], n.name, n}
	}
	slices.SortFunc(keys, func(a, b sortKey) int {
		if a.rank != b.rank {
			return int(a.rank) - int(b.rank)
		}
		return strings.Compare(a.name, b.name)
	})
	for i, k := range keys {
		nodes[i] = k.node
	}
}

type sortKey struct {
	rank uint16 // the type's place among the graph's types
	name string
	node *Node
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
