package l3

import (
	"fmt"
	"slices"
	"strings"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// ReadBack returns netagent's own addresses, routes (every table, both
// families), rules and neighbours in t's namespace as items: those that
// carry the ownership mark (see the package doc). Every other route and
// rule (another protocol's, or one of ours that no item can describe: a
// route with a tos, a rule with a tos or realm) comes back as an
// items.Foreign, so that show and check list it; the kernel's own
// (protocol kernel) are left out, as are others' addresses and neighbours
// and link-local addresses.
//
// hint is the intended graph, or nil. For an object whose item is in hint,
// the fields the kernel fills in by itself are read back as the intended
// item has them (a route's device when only a gateway was given, an IPv6
// route's scope, an IPv4 address's label when it is the interface name,
// a rule's fwmark mask, table 0 for main, IPv6 metric 0 for 1024), and the
// fields that only shape dependencies (Route.CarrierLink, GwAddress, Deps;
// Rule.Deps; Neighbor.Deps) are copied from it, so that what was applied
// reads back Equal. A route's address dependencies are then anchored to
// the addresses read back (see anchorRouteDeps).
func ReadBack(t *netnsx.Target, stateDir string, hint *dg.Graph) ([]dg.Item, error) {
	conn, err := openConnIn(t, stateDir)
	if err != nil {
		return nil, fmt.Errorf("l3 read-back: %w", err)
	}
	defer conn.close()
	return readBack(conn, hint)
}

// dumpNL is the part of netlink.Handle that the plan helpers (Clashes,
// NewRefusals) use: the dumps of routes and rules (read-back dumps all it
// reads raw over the conn).
type dumpNL interface {
	routeNL
	ruleNL
}

var _ dumpNL = (*netlink.Handle)(nil)

// readBack is ReadBack over the narrow interfaces (a fake kernel in unit
// tests).
func readBack(conn rawOps, hint *dg.Graph) ([]dg.Item, error) {
	names, err := linkNames(conn)
	if err != nil {
		return nil, fmt.Errorf("l3 read-back: %w", err)
	}
	h := hinter{hint}
	var lists [][]dg.Item
	for _, read := range []func() ([]dg.Item, error){
		func() ([]dg.Item, error) { return readAddresses(conn, names, h) },
		func() ([]dg.Item, error) { return readRoutes(conn, names, h) },
		func() ([]dg.Item, error) { return readRules(conn, h) },
		func() ([]dg.Item, error) { return readNeighbors(conn, names, h) },
	} {
		got, err := read()
		if err != nil {
			return nil, fmt.Errorf("l3 read-back: %w", err)
		}
		lists = append(lists, got)
	}
	out := slices.Concat(lists...)
	anchorRouteDeps(out)
	return out, nil
}

// anchorRouteDeps makes the address dependencies of the routes in out
// (GwAddress, address refs in Deps) name addresses of out that do what the
// dependency says, for the kernel's route as it is: the intended route's
// address when it is there, else one there that holds the gateway (on the
// route's device) or the source, else none. A route in the current state
// depends on what holds it up now, not on what the intent will give it:
// when the intent moves the uplink to a new address, the route moves to it
// by a modify once it exists, and is never withdrawn for want of an
// address the kernel has not got yet.
//
// It never changes a route of out (it may be the intended item: see
// readRoutes): a route it anchors otherwise is replaced in out by a copy.
func anchorRouteDeps(out []dg.Item) {
	addrs := make(map[string]*items.Address)
	var list []*items.Address
	for _, it := range out {
		if a, ok := it.(*items.Address); ok {
			addrs[a.Name()] = a
			list = append(list, a)
		}
	}
	find := func(name string, holds func(*items.Address) bool) string {
		if a, ok := addrs[name]; ok && holds(a) {
			return name
		}
		for _, a := range list {
			if holds(a) {
				return a.Name()
			}
		}
		return ""
	}
	for i, it := range out {
		r, ok := it.(*items.Route)
		if !ok {
			continue
		}
		gw := r.GwAddress
		if gw != "" {
			gw = find(gw, func(a *items.Address) bool {
				return (r.Dev == "" || a.Dev == r.Dev) && a.PeerPrefix().Contains(r.Gw)
			})
		}
		deps := anchorSrcDeps(r, find)
		if gw == r.GwAddress && sameSlice(deps, r.Deps) {
			continue
		}
		c := *r // r may be the intended item (see readRoutes): never change it
		c.GwAddress, c.Deps = gw, deps
		out[i] = &c
	}
}

// sameSlice reports whether a and b are the same slice (not only equal).
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// anchorSrcDeps returns r.Deps (a copy when it changes: the slice may be
// the intended item's) with each address ref anchored to the address
// holding r.Src or a nexthop's gateway, or dropped.
func anchorSrcDeps(r *items.Route, find func(string, func(*items.Address) bool) string) []dg.ItemRef {
	var deps []dg.ItemRef
	for i, d := range r.Deps {
		name := d.Name
		if d.Type == items.TypeAddress {
			name = find(d.Name, func(a *items.Address) bool {
				return r.Src.IsValid() && a.Prefix.Addr() == r.Src || holdsNexthop(r, a)
			})
		}
		if name == d.Name && deps == nil {
			continue
		}
		if deps == nil {
			deps = append(make([]dg.ItemRef, 0, len(r.Deps)), r.Deps[:i]...)
		}
		if name != "" {
			deps = append(deps, dg.ItemRef{Type: d.Type, Name: name})
		}
	}
	if deps == nil {
		return r.Deps
	}
	return deps
}

// holdsNexthop reports whether a puts a gateway of one of r's nexthops
// on-link (on the nexthop's device, if it names one).
func holdsNexthop(r *items.Route, a *items.Address) bool {
	for _, n := range r.Nexthops {
		if n.Gw.IsValid() && (n.Dev == "" || a.Dev == n.Dev) && a.PeerPrefix().Contains(n.Gw) {
			return true
		}
	}
	return false
}

// routeCursor finds the intended route of a route read back, guessing
// that the kernel dumps them in the order the intended graph got them (an
// intent generated or kept in prefix order): it looks at the next few
// routes of the graph's journal first, and only then makes the route's
// name and looks it up (a tenth of the read-back's time at 100k routes).
type routeCursor struct {
	nodes []*dg.Node
	i     int
}

// routeCursorWindow is how many nodes past the cursor hint looks at.
const routeCursorWindow = 8

// newRouteCursor returns a cursor over g's journal (none if g is nil, not
// a root, or the journal does not reach back to its start).
func newRouteCursor(g *dg.Graph) routeCursor {
	if g == nil || !g.IsRoot() {
		return routeCursor{}
	}
	nodes, _ := g.NodesChangedSince(0)
	return routeCursor{nodes: nodes}
}

// hint returns the intended route named as it is (nil: none), moving the
// cursor past it when it was one of the next few.
func (c *routeCursor) hint(it *items.Route, h hinter) *items.Route {
	for j := c.i; j < len(c.nodes) && j < c.i+routeCursorWindow; j++ {
		// a node of the journal holds the item put last, nil if deleted
		if r, ok := c.nodes[j].Item().(*items.Route); ok && sameRouteName(r, it) {
			c.i = j + 1
			return r
		}
	}
	hint, _ := h.get(items.TypeRoute, it.Name()).(*items.Route)
	return hint
}

// sameRouteName reports whether a and b have the same Name: the same
// table, destination and metric.
func sameRouteName(a, b *items.Route) bool {
	return a.Dst == b.Dst && a.TableID() == b.TableID() && a.EffectiveMetric() == b.EffectiveMetric()
}

// hinter looks items up in the intended graph (which may be nil).
type hinter struct{ g *dg.Graph }

func (h hinter) get(typ, name string) dg.Item {
	if h.g == nil {
		return nil
	}
	it, _, ok := h.g.Lookup(dg.ItemRef{Type: typ, Name: name})
	if !ok {
		return nil
	}
	return it
}

func readAddresses(conn rawOps, names map[int]string, h hinter) ([]dg.Item, error) {
	list, err := dumpAddrs(conn, unix.AF_UNSPEC)
	if err != nil {
		return nil, err
	}
	var out []dg.Item
	for i := range list {
		k := &list[i]
		dev, ok := names[k.index]
		if !k.owned() || !ok {
			continue
		}
		hint, _ := h.get(items.TypeAddress, items.AddressName(dev, k.prefix)).(*items.Address)
		out = append(out, addrItemOf(k, dev, hint))
	}
	return out, nil
}

// addrItemOf converts a kernel address on dev into an item. An IPv4 label
// equal to the interface name is the default, "" (unless hint spells it
// out); an IPv6 address has neither label nor scope of its own (the kernel
// derives the scope from the address: it is read back as the hint has it).
// A finite lifetime reads back as the hint's ValidUntil when the kernel's
// countdown matches it (lifetimeAsWanted), else as the kernel has it.
func addrItemOf(k *kernelAddr, dev string, hint *items.Address) *items.Address {
	a := &items.Address{Dev: dev, Prefix: k.prefix, Peer: k.peer, RouteMetric: k.metric}
	if hint != nil {
		a.Deps = hint.Deps // the renderer's ordering, not kernel state
	}
	now := time.Now()
	a.ValidUntil = k.validUntil(now)
	if k.preferred != k.valid {
		a.PreferredUntil = k.preferredUntil(now)
	}
	if hint != nil && lifetimeAsWanted(k, hint, now) {
		// the countdowns in whole seconds are the same lifetimes
		a.ValidUntil, a.PreferredUntil = hint.ValidUntil, hint.PreferredUntil
	}
	if !a.Prefix.Addr().Is4() {
		if hint != nil {
			a.Scope = hint.Scope
		}
		return a
	}
	a.Scope = items.Scope(k.scope)
	if k.label != dev || (hint != nil && hint.Label == k.label) {
		a.Label = k.label
	}
	return a
}

// readRoutes decodes the raw route dump with the codec the writer uses
// (routeMsg), message by message as it arrives: netagent's routes, both
// families, asked of the kernel by protocol and table (readFilters: the
// tables of the record and of hint's routes; the kernel sends no other
// owner's route and walks no other table). A route that reads back Equal
// to its hint is the hint itself (no copy: items are values no one
// changes in place), so that the current state of a converged namespace
// shares its items with the intended graph.
//
// Other owners' routes are read only where they matter: when an intended
// route of hint is not there, the routes of its table are dumped and those
// of another protocol with its identity come back as Foreign (the clash
// check and plan show; see clashingRoutes). `show --all` reads the others'
// routes with ReadForeignAddrNeigh.
func readRoutes(conn rawOps, names map[int]string, h hinter) ([]dg.Item, error) {
	var (
		out  []dg.Item
		seen map[string]int
		it   items.Route
		next routeCursor
		hits int // routes read back as their hint
	)
	if h.g != nil {
		out = make([]dg.Item, 0, h.g.Len()) // about as many as intended
	}
	err := eachRouteIn(conn, unix.AF_UNSPEC, readFilters(conn, h.g), func(m *routeMsg) {
		if decodeRouteInto(m, names, &it) {
			hint := next.hint(&it, h)
			r := ownRoute(&it, hint)
			if r == hint {
				hits++
			}
			out = append(out, r)
			return
		}
		plain, _ := decodeRoute(*m, names)
		out = append(out, foreignRoute(*m, plain, names, seen))
	}, func() { out, seen, next, hits = out[:0], map[string]int{}, newRouteCursor(h.g), 0 })
	if err != nil {
		return nil, err
	}
	return clashingRoutes(conn, names, h, out, hits)
}

// countRoutes is the number of routes in g.
func countRoutes(g *dg.Graph) int {
	n := 0
	for it := range g.Unordered() {
		if _, ok := it.(*items.Route); ok {
			n++
		}
	}
	return n
}

// clashingRoutes appends to out (netagent's routes read back, hits of them
// as their hint) the routes of other protocols that hold the identity of
// an intended route out has not: the routes of those routes' tables are
// dumped (tableFilters). When every intended
// route read back as its hint, nothing is dumped.
func clashingRoutes(conn rawOps, names map[int]string, h hinter, out []dg.Item, hits int) ([]dg.Item, error) {
	if h.g == nil || hits == countRoutes(h.g) {
		return out, nil
	}
	have := make(map[string]bool, len(out))
	for _, it := range out {
		if r, ok := it.(*items.Route); ok {
			have[r.Name()] = true
		}
	}
	missing := map[string]bool{}
	var tables []uint32
	for it := range h.g.Unordered() {
		if r, ok := it.(*items.Route); ok && !have[r.Name()] {
			missing[r.Name()] = true
			tables = append(tables, r.TableID())
		}
	}
	if len(tables) == 0 { // some read back otherwise: none is missing
		return out, nil
	}
	seen := map[string]int{}
	start := len(out)
	err := eachRouteIn(conn, unix.AF_UNSPEC, tableFilters(conn, 0, tables), func(m *routeMsg) {
		if m.Protocol == items.RouteProtocol || m.Protocol == unix.RTPROT_KERNEL || m.Tos != 0 || !missing[m.identity()] {
			return
		}
		plain, _ := decodeRoute(*m, names)
		out = append(out, foreignRoute(*m, plain, names, seen))
	}, func() { out, seen = out[:start], map[string]int{} })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ownRoute is the item of one of netagent's routes, decoded into *it: the
// hint (the intended route of the same name, or nil) when it reads back
// Equal to it, else a copy of *it.
func ownRoute(it *items.Route, hint *items.Route) *items.Route {
	applyRouteHint(it, hint)
	if hint != nil && hint.Equal(it) {
		return hint
	}
	c := *it
	return &c
}

// foreignRoute describes a route netagent does not own or cannot express;
// it is m decoded, or nil.
func foreignRoute(m routeMsg, it *items.Route, names map[int]string, seen map[string]int) *items.Foreign {
	f := &items.Foreign{Kind: items.TypeRoute, Owned: m.Protocol == items.RouteProtocol}
	var b strings.Builder
	if it != nil {
		b.WriteString(strings.TrimPrefix(it.String(), "route "))
	} else {
		b.WriteString(m.identity())
		if m.Tos != 0 {
			fmt.Fprintf(&b, " tos %#x", m.Tos)
		}
		fmt.Fprintf(&b, " type %d", m.Type)
		if m.Gw.IsValid() {
			b.WriteString(" via " + m.Gw.String())
		}
		if n, ok := names[m.OIF]; ok {
			b.WriteString(" dev " + n)
		}
		for _, h := range m.Nexthops {
			fmt.Fprintf(&b, " nexthop via %s dev %s weight %d", h.Gw, names[h.OIF], int(h.Hops)+1)
		}
		if m.Other {
			b.WriteString(" (with attributes netagent does not manage)")
		}
	}
	fmt.Fprintf(&b, " proto %d", m.Protocol)
	if m.Tos == 0 {
		f.Holds = dg.ItemRef{Type: items.TypeRoute, Name: m.identity()}
	}
	f.Desc = unique(b.String(), seen)
	return f
}

// unique returns desc, or desc with " #n" for its n-th repetition.
func unique(desc string, seen map[string]int) string {
	seen[desc]++
	if n := seen[desc]; n > 1 {
		return fmt.Sprintf("%s #%d", desc, n)
	}
	return desc
}

// readRules decodes the raw rule dump with the writer's codec (ruleMsg):
// netagent's rules, and the others (not the kernel's) as Foreign.
func readRules(conn rawOps, h hinter) ([]dg.Item, error) {
	list, err := dumpRuleMsgs(conn, unix.AF_UNSPEC)
	if err != nil {
		return nil, err
	}
	var out []dg.Item
	seen := map[string]int{}
	for _, m := range list {
		if m.Proto == unix.RTPROT_KERNEL {
			continue
		}
		plain, ok := decodeRule(m, nil)
		if ok && m.Proto == items.RouteProtocol {
			hint, _ := h.get(items.TypeRule, plain.Name()).(*items.Rule)
			r, _ := decodeRule(m, hint)
			out = append(out, r)
			continue
		}
		out = append(out, foreignRule(m, plain, seen))
	}
	return out, nil
}

// foreignRule describes a rule netagent does not own or cannot express;
// it is m decoded, or nil.
func foreignRule(m ruleMsg, it *items.Rule, seen map[string]int) *items.Foreign {
	f := &items.Foreign{Kind: items.TypeRule, Owned: m.Proto == items.RouteProtocol}
	var desc string
	if it != nil {
		desc = it.Name()
		f.Holds = dg.Ref(it)
	} else {
		desc = fmt.Sprintf("%s %d: %s", familyOfAF(int(m.Family)), m.Prio, ruleFields(m))
	}
	f.Desc = unique(fmt.Sprintf("%s proto %d", desc, m.Proto), seen)
	return f
}

// ruleFields describes the fields of a rule no item can describe.
func ruleFields(m ruleMsg) string {
	var b strings.Builder
	if m.SrcLen > 0 {
		fmt.Fprintf(&b, "from %s/%d ", m.Src, m.SrcLen)
	}
	if m.DstLen > 0 {
		fmt.Fprintf(&b, "to %s/%d ", m.Dst, m.DstLen)
	}
	if m.Tos != 0 {
		fmt.Fprintf(&b, "tos %#x ", m.Tos)
	}
	if m.IifName != "" {
		b.WriteString("iif " + m.IifName + " ")
	}
	if m.OifName != "" {
		b.WriteString("oif " + m.OifName + " ")
	}
	fmt.Fprintf(&b, "action %d table %d", m.Action, m.Table)
	if m.Other {
		b.WriteString(" (with selectors netagent does not manage)")
	}
	return b.String()
}

func readNeighbors(conn rawOps, names map[int]string, h hinter) ([]dg.Item, error) {
	list, err := dumpNeighs(conn, unix.AF_UNSPEC)
	if err != nil {
		return nil, err
	}
	var out []dg.Item
	for i := range list {
		k := &list[i]
		dev, ok := names[k.index]
		if !k.owned() || !ok {
			continue
		}
		n := &items.Neighbor{Dev: dev, IP: k.ip, MAC: k.mac}
		if hint, ok := h.get(items.TypeNeighbor, n.Name()).(*items.Neighbor); ok {
			n.Deps = hint.Deps // the renderer's ordering, not kernel state
		}
		out = append(out, n)
	}
	return out, nil
}
