package depgraph

import (
	"time"
	"unsafe"
)

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
	// The fields a reconciler reads for every node come first, in one
	// cache line.
	r    *root
	peer *Node // cached: the node of the same reference in another graph
	item Item
	idx  int32  // see Index
	typ  uint16 // see root.typeID; the reference's Type is r.types[typ]
	// The state data, packed (see setState): a StateData with an error or
	// with a State or LastOp beyond 15 is kept in root.cold instead.
	so    uint8 // State in the low 4 bits, LastOp in the high 4
	flags uint8 // nodeDead, nodeCold, nodeExternal, nodeSorted, nodeAdded
	// The item's dependencies and the nodes of their RequiredItem, in
	// the same graph, are two arrays of ndeps, held by their first
	// element (see dependencies, required): a node keeps two pointers
	// and a count instead of two slices. req is nil without deps, or
	// before link.
	deps  *Dependency
	req   **Node
	ndeps int32
	// The nodes that require this one (see root.addDependant): an
	// array of capDependants held by its first element, of which the
	// first ndependants are in use (see dependantList): a pointer and
	// two counts instead of a slice.
	ndependants   int32
	dependants    **Node
	capDependants int32
	// owner is the subgraph the item was put into, as its number in
	// root.owners (see ownerGraph); 0 for the root.
	owner  int32
	name   string    // the reference's Name
	modRev uint64    // revision at which the value last changed in place
	since  time.Time // the state data's Since (see so)
}

const (
	nodeDead     uint8 = 1 << iota // dropped from its graph
	nodeCold                       // the state data is in root.cold
	nodeExternal                   // the item is external
	nodeSorted                     // in root.sortedNodes
	nodeAdded                      // in root.added
)

// setItem makes item (or nil) the node's item; ext is item.External().
func (n *Node) setItem(item Item, ext bool) {
	n.item = item
	n.flags &^= nodeExternal
	if ext {
		n.flags |= nodeExternal
	}
}

// External reports whether the node holds an external item (see
// Item.External), without asking the item again.
func (n *Node) External() bool { return n.flags&nodeExternal != 0 }

func (n *Node) dead() bool { return n.flags&nodeDead != 0 }

// setState records st next to the item.
func (n *Node) setState(st StateData) {
	if n.flags&nodeCold != 0 {
		delete(n.r.cold, n)
		n.flags &^= nodeCold
	}
	if st.LastErr == nil && st.State >= 0 && st.State < 16 && st.LastOp < 16 {
		n.so, n.since = uint8(st.State)|uint8(st.LastOp)<<4, st.Since
		return
	}
	if n.r.cold == nil {
		n.r.cold = make(map[*Node]StateData)
	}
	n.r.cold[n] = st
	n.flags |= nodeCold
	n.so, n.since = 0, time.Time{}
}

// Index is a small number that no other live node of the same root graph
// has: from 0 up to about the most nodes the graph held at once (the
// number of a dropped node is given to a later one). An algorithm keeps
// its own data about the nodes of one graph in a slice by Index, instead
// of a map. It means nothing once the node is Dead; while the graph is
// held (Hold), no node is dropped, so no number is given again.
func (n *Node) Index() int { return int(n.idx) }

// Ref returns the node's reference.
func (n *Node) Ref() ItemRef { return ItemRef{Type: n.r.types[n.typ], Name: n.name} }

// Type returns the reference's Type.
func (n *Node) Type() string { return n.r.types[n.typ] }

// Item returns the item, or nil if the reference has none in this graph.
func (n *Node) Item() Item { return n.item }

// Present reports whether the node holds an item.
func (n *Node) Present() bool { return n.item != nil }

// State returns the state data recorded next to the item.
func (n *Node) State() StateData {
	if n.flags&nodeCold != 0 {
		return n.r.cold[n]
	}
	return StateData{State: State(n.so & 15), LastOp: Operation(n.so >> 4), Since: n.since}
}

// Dependencies returns the item's dependencies (nil without an item).
func (n *Node) Dependencies() []Dependency { return n.dependencies() }

func (n *Node) dependencies() []Dependency {
	if n.deps == nil {
		return nil
	}
	return unsafe.Slice(n.deps, n.ndeps)
}

// setDependencies records deps (the slice's elements, not a copy; its
// capacity is not kept). It leaves req alone: the caller links again, or
// deps requires the same references.
func (n *Node) setDependencies(deps []Dependency) {
	n.deps, n.ndeps = unsafe.SliceData(deps), int32(len(deps))
}

// Required returns the nodes of the required items, in the same order as
// Dependencies, in the same graph. The slice belongs to the graph.
func (n *Node) Required() []*Node { return n.required() }

func (n *Node) required() []*Node {
	if n.req == nil {
		return nil
	}
	return unsafe.Slice(n.req, n.ndeps)
}

// setRequired records req, whose length is that of the dependencies.
func (n *Node) setRequired(req []*Node) {
	if len(req) == 0 {
		n.req = nil
		return
	}
	if len(req) != int(n.ndeps) {
		panic("depgraph: required nodes and dependencies differ in number")
	}
	n.req = unsafe.SliceData(req)
}

// Dependants returns the nodes whose items depend on this reference, in
// no particular order. The slice belongs to the graph and is valid until
// the next change.
func (n *Node) Dependants() []*Node { return n.dependantList() }

func (n *Node) dependantList() []*Node {
	if n.dependants == nil {
		return nil
	}
	return unsafe.Slice(n.dependants, n.capDependants)[:n.ndependants]
}

// ownerGraph returns the subgraph the item was put into; nil for the
// root.
func (n *Node) ownerGraph() *Graph {
	if n.owner == 0 {
		return nil
	}
	return n.r.owners[n.owner]
}

// setOwner records g (nil for the root) as the subgraph the item was put
// into, numbering g in its root's owners if it has no number yet.
func (n *Node) setOwner(g *Graph) {
	if g == nil {
		n.owner = 0
		return
	}
	if g.ownerID == 0 {
		r := g.r
		if k := len(r.freeOwners); k > 0 {
			g.ownerID = r.freeOwners[k-1]
			r.freeOwners = r.freeOwners[:k-1]
			r.owners[g.ownerID] = g
		} else {
			if len(r.owners) == 0 {
				r.owners = append(r.owners, nil) // 0 is the root
			}
			g.ownerID = int32(len(r.owners))
			r.owners = append(r.owners, g)
		}
	}
	n.owner = g.ownerID
}

// releaseOwners gives back the numbers of g and its subgraphs once they
// own no item (DeleteSubGraph).
func (r *root) releaseOwners(g *Graph) {
	for _, s := range g.subs {
		r.releaseOwners(s)
	}
	if g.ownerID != 0 && g.nmembers == 0 {
		r.owners[g.ownerID] = nil
		r.freeOwners = append(r.freeOwners, g.ownerID)
		g.ownerID = 0
	}
}

// setDependants records list (nil for none) as n's dependants, its
// capacity included.
func (n *Node) setDependants(list []*Node) {
	if cap(list) == 0 {
		n.dependants, n.ndependants, n.capDependants = nil, 0, 0
		return
	}
	n.dependants, n.ndependants, n.capDependants = unsafe.SliceData(list), int32(len(list)), int32(cap(list))
}

// Dead reports whether the node was dropped from its graph.
func (n *Node) Dead() bool { return n.dead() }

// In returns the node of the same reference in g (created empty if g has
// none; n itself if n is g's), caching the answer so that the next call is
// a pointer read.
func (n *Node) In(g *Graph) *Node { return n.in(g.r) }

func (n *Node) in(r *root) *Node {
	if n.r == r {
		return n
	}
	if p := n.peer; p != nil && p.r == r && !p.dead() {
		return p
	}
	p := r.nodeFor(n.Ref())
	link(n, p)
	return p
}

// link caches p as n's counterpart, and n as p's unless p has a live one.
// Each root lists its nodes with a counterpart (root.peered) so that
// ForgetPeers visits only those.
func link(n, p *Node) {
	n.setPeer(p)
	if p.peer == nil || p.peer.dead() {
		p.setPeer(n)
	}
}

func (n *Node) setPeer(p *Node) {
	if n.peer == nil {
		r := n.r
		if r.peered == nil {
			// Sized once for a run that looks at everything: as many
			// as either graph has (a current graph about to take a
			// whole intended one holds few nodes yet).
			r.peered = make([]*Node, 0, max(16, r.index.count, p.r.index.count))
		}
		r.peered = append(r.peered, n)
	}
	n.peer = p
}

// addDependant records that d requires n. A node lists each dependant
// once: link adds a node once per distinct required reference.
func (r *root) addDependant(n, d *Node) {
	// A list that grows step by step (a graph built by Put) is grown
	// by append: what it leaves behind is garbage at once, where in a
	// slab it would stay allocated with the slab.
	list := append(n.dependantList(), d)
	n.setDependants(list)
	if len(r.hubs) > 0 && len(list) > hubThreshold {
		if pos := r.hubs[n]; pos != nil {
			pos[d] = len(list) - 1
		}
	}
}

// ptrSlab is how many node pointers one allocation holds for the small
// arrays of required nodes and dependants (see nodeArray): 16 KiB with the
// malloc header, one size class.
const ptrSlab = (16384 - mallocHeader) / int(unsafe.Sizeof((*Node)(nil)))

// nodeArray returns an array of n nil node pointers (length and capacity
// n). A small one is carved from the root's slab, so that linking a graph
// of 100k items makes a few hundred allocations instead of one or two per
// item, and the collector tracks a few big objects instead of many small
// ones. Like the node slabs, a slab stays allocated while any array in it
// is in use, and what is carved is never carved again: an array a node no
// longer uses (its item deleted or relinked) may still be held by a caller
// (Required, Dependants), and is only garbage once its slab is.
func (r *root) nodeArray(n int) []*Node {
	if n > ptrSlab/16 {
		return make([]*Node, n)
	}
	s := r.ptrSlab
	if cap(s)-len(s) < n {
		s = make([]*Node, 0, ptrSlab)
	}
	r.ptrSlab = s[:len(s)+n]
	return s[len(s) : len(s)+n : len(s)+n]
}

// hubThreshold is the number of dependants past which removing one uses an
// index (root.hubs), made at the first removal, so that removals stay O(1)
// for hubs with many dependants. Building a graph makes none.
const hubThreshold = 16

// removeDependant forgets that d requires n, moving n's last dependant
// into its place.
func (r *root) removeDependant(n, d *Node) {
	list := n.dependantList()
	var pos map[*Node]int
	i := -1
	if len(list) > hubThreshold {
		pos = r.hubIndex(n)
		if j, ok := pos[d]; ok {
			i = j
			delete(pos, d)
		}
	} else {
		for j, m := range list {
			if m == d {
				i = j
				break
			}
		}
	}
	if i < 0 {
		return
	}
	last := len(list) - 1
	if i != last {
		list[i] = list[last]
		if pos != nil {
			pos[list[i]] = i
		}
	}
	list[last] = nil
	list = list[:last]
	if len(list) <= hubThreshold && r.hubs[n] != nil {
		delete(r.hubs, n)
	}
	if len(list) == 0 {
		list = nil
	}
	n.setDependants(list)
}

// hubIndex returns the positions of n's dependants, making them if needed.
func (r *root) hubIndex(n *Node) map[*Node]int {
	if pos := r.hubs[n]; pos != nil {
		return pos
	}
	list := n.dependantList()
	pos := make(map[*Node]int, len(list))
	for i, m := range list {
		pos[m] = i
	}
	if r.hubs == nil {
		r.hubs = make(map[*Node]map[*Node]int)
	}
	r.hubs[n] = pos
	return pos
}

// Peer returns the node of the same reference in g if g has one (without
// creating it), caching the answer.
func (n *Node) Peer(g *Graph) *Node {
	if p := n.peer; p != nil && p.r == g.r && !p.dead() {
		return p
	}
	p := g.r.node(n.Ref())
	if p != nil {
		link(n, p)
	}
	return p
}

// ForgetPeers drops the nodes' cached counterparts in other graphs (see
// In and Peer), on both sides, so that a graph the caller has let go of
// (a current graph replaced by a fresh read-back, an intended graph
// replaced by a new one) is not kept alive by this one. The caches fill
// again on the next lookups. It visits only the nodes that have one.
func (g *Graph) ForgetPeers() {
	r := g.r
	for i, n := range r.peered {
		if p := n.peer; p != nil {
			if p.peer == n {
				p.peer = nil // left in p's list, as a node without one
			}
			n.peer = nil
		}
		r.peered[i] = nil
	}
	r.peered = r.peered[:0] // kept for the next run: it looks at as many
}
