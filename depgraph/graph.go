package depgraph

import (
	"iter"
	"slices"
	"strings"
	"sync/atomic"
)

// Graph is a set of items with their dependencies, organised in a tree of
// named subgraphs. A *Graph value is either the root of such a tree, a
// subgraph of it, or a view of a single item (ItemAsSubGraph); all of them
// share the root's index, so an item is found in O(1) from any of them.
//
// A Graph is not safe for concurrent use: one goroutine owns it.
type Graph struct {
	name   string
	desc   string
	parent *Graph
	subs   map[string]*Graph
	// members holds the items put directly into this subgraph (nil for the
	// root, whose members are all nodes without another owner).
	members map[ItemRef]*node
	only    *ItemRef // set for single-item views
	r       *root
}

type root struct {
	id    uint64
	rev   uint64
	nodes map[ItemRef]*node
	// dependants indexes, for every referenced item (present or not), the
	// items whose dependencies name it.
	dependants map[ItemRef]*refSet
	journal    journal
	sorted     []ItemRef // cache of all refs in order, nil when stale
	meta       map[string]any
}

type node struct {
	item   Item
	deps   []Dependency
	state  StateData
	owner  *Graph
	modRev uint64 // revision at which the value last changed in place
}

var graphIDs atomic.Uint64

// New returns an empty root graph. The items, if any, are put into it.
func New(name string, items ...Item) *Graph {
	g := &Graph{
		name: name,
		r: &root{
			id:         graphIDs.Add(1),
			nodes:      make(map[ItemRef]*node, len(items)),
			dependants: make(map[ItemRef]*refSet),
		},
	}
	for _, it := range items {
		g.Put(it)
	}
	return g
}

// Name returns the (sub)graph's name.
func (g *Graph) Name() string { return g.name }

// Description returns the free-text description set with SetDescription.
func (g *Graph) Description() string { return g.desc }

// SetDescription attaches a human description (shown in DOT output).
func (g *Graph) SetDescription(d string) { g.desc = d }

// ID identifies the root graph instance; it never repeats in a process.
func (g *Graph) ID() uint64 { return g.r.id }

// Root returns the root of g's tree.
func (g *Graph) Root() *Graph {
	for g.parent != nil {
		g = g.parent
	}
	return g
}

// IsRoot reports whether g is a root graph (not a subgraph or a view).
func (g *Graph) IsRoot() bool { return g.parent == nil && g.only == nil }

// Path returns the names of the subgraphs from the root (excluded) down to
// g, joined by "/". The root's path is "".
func (g *Graph) Path() string {
	var parts []string
	for s := g; s.parent != nil; s = s.parent {
		if s.only == nil {
			parts = append(parts, s.name)
		}
	}
	slices.Reverse(parts)
	return strings.Join(parts, "/")
}

// Rev returns the root's revision: it grows with every change of an item's
// presence or value (not with state-only changes).
func (g *Graph) Rev() uint64 { return g.r.rev }

// Len returns the number of items in g (subgraphs included).
func (g *Graph) Len() int {
	switch {
	case g.only != nil:
		if g.Contains(*g.only) {
			return 1
		}
		return 0
	case g.parent == nil:
		return len(g.r.nodes)
	}
	n := len(g.members)
	for _, s := range g.subs {
		n += s.Len()
	}
	return n
}

// Contains reports whether the item is in g or one of its subgraphs.
func (g *Graph) Contains(ref ItemRef) bool {
	n, ok := g.r.nodes[ref]
	return ok && g.holds(n, ref)
}

func (g *Graph) holds(n *node, ref ItemRef) bool {
	if g.only != nil {
		return ref == *g.only
	}
	if g.parent == nil {
		return true
	}
	for o := n.owner; o != nil; o = o.parent {
		if o == g {
			return true
		}
	}
	return false
}

// Get returns the item if it is in g.
func (g *Graph) Get(ref ItemRef) (Item, bool) {
	n, ok := g.r.nodes[ref]
	if !ok || !g.holds(n, ref) {
		return nil, false
	}
	return n.item, true
}

// Lookup returns the item from anywhere in g's tree, with its state data.
func (g *Graph) Lookup(ref ItemRef) (Item, StateData, bool) {
	n, ok := g.r.nodes[ref]
	if !ok {
		return nil, StateData{}, false
	}
	return n.item, n.state, true
}

// State returns the state data recorded next to the item.
func (g *Graph) State(ref ItemRef) (StateData, bool) {
	n, ok := g.r.nodes[ref]
	if !ok || !g.holds(n, ref) {
		return StateData{}, false
	}
	return n.state, true
}

// Dependencies returns the dependencies recorded when the item was put
// (anywhere in g's tree). The slice belongs to the graph.
func (g *Graph) Dependencies(ref ItemRef) []Dependency {
	if n, ok := g.r.nodes[ref]; ok {
		return n.deps
	}
	return nil
}

// Dependants returns the references of the items in g's tree whose
// dependencies name ref, in no particular order. The slice belongs to the
// graph and is valid until the next change.
func (g *Graph) Dependants(ref ItemRef) []ItemRef {
	if s := g.r.dependants[ref]; s != nil {
		return s.list
	}
	return nil
}

// ModifiedSince reports whether the item's value was replaced by a different
// one (Put over an unequal item) after revision rev.
func (g *Graph) ModifiedSince(ref ItemRef, rev uint64) bool {
	n, ok := g.r.nodes[ref]
	return ok && n.modRev > rev
}

// Put adds the item to g, or replaces the item of the same reference
// wherever it is in the tree (moving it into g). Its state data is
// StateData{State: StateCreated}. Putting an item equal to the present one
// changes nothing.
func (g *Graph) Put(item Item) {
	g.PutWithState(item, StateData{State: StateCreated})
}

// PutWithState is Put with explicit state data (for current-state graphs).
func (g *Graph) PutWithState(item Item, st StateData) {
	ref := Ref(item)
	owner := g.ownerForPut()
	if n, ok := g.r.nodes[ref]; ok {
		g.replace(n, ref, item, owner)
		n.state = st
		return
	}
	n := &node{item: item, deps: item.Dependencies(), state: st, owner: owner}
	g.r.nodes[ref] = n
	if owner != nil {
		owner.members[ref] = n
	}
	g.r.indexDeps(ref, n.deps)
	if g.r.sorted != nil {
		g.r.sorted = nil
	}
	g.r.touch(ref)
}

func (g *Graph) ownerForPut() *Graph {
	s := g
	if s.only != nil {
		s = s.parent
	}
	if s.parent == nil {
		return nil
	}
	if s.members == nil {
		s.members = make(map[ItemRef]*node)
	}
	return s
}

func (g *Graph) replace(n *node, ref ItemRef, item Item, owner *Graph) {
	moved := n.owner != owner
	if moved {
		if n.owner != nil {
			delete(n.owner.members, ref)
		}
		n.owner = owner
		if owner != nil {
			owner.members[ref] = n
		}
	}
	if item.Equal(n.item) {
		n.item = item
		if moved {
			g.r.touch(ref)
		}
		return
	}
	g.r.unindexDeps(ref, n.deps)
	n.item, n.deps = item, item.Dependencies()
	g.r.indexDeps(ref, n.deps)
	g.r.touch(ref)
	n.modRev = g.r.rev
}

// SetState replaces the state data of an item anywhere in g's tree. It does
// not count as a change (Rev is unchanged). It reports whether the item
// exists.
func (g *Graph) SetState(ref ItemRef, st StateData) bool {
	n, ok := g.r.nodes[ref]
	if ok {
		n.state = st
	}
	return ok
}

// Delete removes the item from g. It reports whether it was there.
func (g *Graph) Delete(ref ItemRef) bool {
	n, ok := g.r.nodes[ref]
	if !ok || !g.holds(n, ref) {
		return false
	}
	delete(g.r.nodes, ref)
	if n.owner != nil {
		delete(n.owner.members, ref)
	}
	g.r.unindexDeps(ref, n.deps)
	g.r.sorted = nil
	g.r.touch(ref)
	return true
}

func (r *root) touch(ref ItemRef) {
	r.rev++
	r.journal.add(r.rev, ref, len(r.nodes))
}

func (r *root) indexDeps(ref ItemRef, deps []Dependency) {
	for _, d := range deps {
		s := r.dependants[d.RequiredItem]
		if s == nil {
			s = &refSet{}
			r.dependants[d.RequiredItem] = s
		}
		s.add(ref)
	}
}

func (r *root) unindexDeps(ref ItemRef, deps []Dependency) {
	for _, d := range deps {
		if s := r.dependants[d.RequiredItem]; s != nil {
			s.remove(ref)
			if s.len() == 0 {
				delete(r.dependants, d.RequiredItem)
			}
		}
	}
}

// Refs returns the references of g's items in order (type, then name).
func (g *Graph) Refs() []ItemRef {
	switch {
	case g.only != nil:
		if g.Contains(*g.only) {
			return []ItemRef{*g.only}
		}
		return nil
	case g.parent == nil:
		if g.r.sorted == nil {
			g.r.sorted = sortedKeys(g.r.nodes)
		}
		return g.r.sorted
	}
	var refs []ItemRef
	g.walkSubgraphs(func(s *Graph) {
		for ref := range s.members {
			refs = append(refs, ref)
		}
	})
	slices.SortFunc(refs, ItemRef.Compare)
	return refs
}

func sortedKeys(m map[ItemRef]*node) []ItemRef {
	refs := make([]ItemRef, 0, len(m))
	for ref := range m {
		refs = append(refs, ref)
	}
	slices.SortFunc(refs, ItemRef.Compare)
	return refs
}

// Items iterates over g's items in order (type, then name).
func (g *Graph) Items() iter.Seq2[Item, StateData] {
	refs := g.Refs()
	return func(yield func(Item, StateData) bool) {
		for _, ref := range refs {
			n, ok := g.r.nodes[ref]
			if ok && !yield(n.item, n.state) {
				return
			}
		}
	}
}

func (g *Graph) walkSubgraphs(f func(*Graph)) {
	f(g)
	for _, name := range sortedNames(g.subs) {
		g.subs[name].walkSubgraphs(f)
	}
}

func sortedNames(m map[string]*Graph) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// LookupDeps returns the item if it is in g, with the dependencies recorded
// when it was put (one map access instead of two).
func (g *Graph) LookupDeps(ref ItemRef) (Item, []Dependency, bool) {
	n, ok := g.r.nodes[ref]
	if !ok || !g.holds(n, ref) {
		return nil, nil, false
	}
	return n.item, n.deps, true
}
