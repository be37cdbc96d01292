package render

import (
	"net/netip"
	"reflect"
	"slices"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/items/lease4"
)

// RouteEdit is what changes in the graph RenderFiles renders when one
// file's routes change and nothing else of the intent does: the items of
// the routes no longer there, and those of the new routes, which go into
// the subgraph SubgraphName(File).
type RouteEdit struct {
	File    string
	Removed []dg.ItemRef
	Added   []dg.Item
	// Drifts are the policies of the added items that are not repair.
	Drifts DriftPolicies
}

// Empty reports whether the edit changes nothing.
func (e RouteEdit) Empty() bool { return len(e.Removed) == 0 && len(e.Added) == 0 }

// MaxRouteEdit is the largest number of routes (removed plus added) that
// RenderRouteEdit renders on their own; a larger edit is rendered whole.
const MaxRouteEdit = 1024

// maxOnLinkContext bounds the on-link routes (a device, no gateway) that
// an edit renders with its routes, as their context.
const maxOnLinkContext = 256

// RenderRouteEdit renders only what changed when the file name of files
// (the new set, valid or not) went from prev to files[name], given that
// the set with prev rendered (RenderFilesWith, with the same facts)
// without error and without conflicts into a graph that has exactly the
// items exists reports. It answers ok false
// when it cannot tell the edit apart from a full render: anything but the
// routes of that file changed, the file has no routes left, the edit is
// large, a route added or removed
// is an on-link one (others' gateways may depend on it), or the new set
// does not render (a full RenderFiles then says why, with the right
// paths). When ok, applying the edit to the previous graph (deleting
// Removed, putting Added in its file's subgraph) gives the graph
// RenderFiles(files) renders, and its drift policies those of DriftOf.
//
// It validates and renders the added routes with every other section of
// the intent and its on-link routes, which is all a route's validity and
// its item depend on, besides its identity: an added route whose item is
// already in the graph (and not removed) is a duplicate or a conflict
// with another file, rendered whole.
func RenderRouteEdit(files map[string]*intent.Intent, name string, prev *intent.Intent, facts Facts, exists func(dg.ItemRef) bool) (RouteEdit, bool) {
	next := files[name]
	if next == nil || prev == nil || len(next.Routes) == 0 || !sameButRoutes(prev, next) {
		return RouteEdit{}, false
	}
	removed, added, ok := routeDiff(prev.Routes, next.Routes)
	if !ok {
		return RouteEdit{}, false
	}
	edit := RouteEdit{File: name}
	if len(removed) == 0 && len(added) == 0 {
		return edit, true
	}
	if claimsChange(facts, removed, added) {
		return RouteEdit{}, false
	}
	onLink, ok := onLinkRoutes(files)
	if !ok {
		return RouteEdit{}, false
	}
	base, _, err := renderContext(files, facts, onLink, name, nil)
	if err != nil {
		return RouteEdit{}, false
	}
	old, _, err := renderContext(files, facts, onLink, name, removed)
	if err != nil {
		return RouteEdit{}, false
	}
	g, drifts, err := renderContext(files, facts, onLink, name, added)
	if err != nil {
		return RouteEdit{}, false
	}
	gone := map[dg.ItemRef]bool{}
	for _, n := range newRoutes(old, base) {
		edit.Removed = append(edit.Removed, n.Ref())
		gone[n.Ref()] = true
	}
	for _, n := range newRoutes(g, base) {
		if ref := n.Ref(); exists(ref) && !gone[ref] {
			return RouteEdit{}, false // a duplicate, or another file's route
		}
		edit.Added = append(edit.Added, n.Item())
		if p, ok := drifts[n.Ref()]; ok {
			if edit.Drifts == nil {
				edit.Drifts = DriftPolicies{}
			}
			edit.Drifts[n.Ref()] = p
		}
	}
	if len(edit.Removed) != len(removed) || len(edit.Added) != len(added) {
		return RouteEdit{}, false
	}
	return edit, true
}

// claimsChange reports whether a route of table main added or removed
// holds (is equal to or less specific than) what a known DHCPv4 lease
// gives, its subnet or a route: it may be a claim that changes what of
// the lease is refused (leaseclaims.go), which only a full render says.
// Routes are no claims against a DHCPv6 address.
func claimsChange(facts Facts, removed, added []intent.Route) bool {
	if len(facts.Leases) == 0 {
		return false
	}
	for _, r := range slices.Concat(removed, added) {
		if r.EffectiveTable() != items.TableMain {
			continue
		}
		dst, err := r.Dst()
		if err != nil {
			return true
		}
		for _, l := range facts.Leases {
			if leaseWithin(l, dst) {
				return true
			}
		}
	}
	return false
}

// leaseWithin reports whether the subnet or a route of l is inside dst
// (or equal to it).
func leaseWithin(l *lease4.Lease, dst netip.Prefix) bool {
	within := func(p netip.Prefix) bool { return dst.Bits() <= p.Bits() && dst.Contains(p.Addr()) }
	if within(l.Address.Masked()) || (len(l.Routes) == 0 && l.Router.IsValid() && within(netip.PrefixFrom(netip.IPv4Unspecified(), 0))) {
		return true
	}
	for _, lr := range l.Routes {
		if within(lr.Dst) {
			return true
		}
	}
	return false
}

// sameButRoutes reports whether a and b differ in nothing but their routes.
func sameButRoutes(a, b *intent.Intent) bool {
	x, y := *a, *b
	x.Routes, y.Routes = nil, nil
	return reflect.DeepEqual(&x, &y)
}

// routeDiff returns the routes of a not in b and those of b not in a, as
// the part between their common beginning and end; ok is false when that
// part is larger than MaxRouteEdit.
func routeDiff(a, b []intent.Route) (removed, added []intent.Route, ok bool) {
	i := 0
	for i < len(a) && i < len(b) && sameRoute(&a[i], &b[i]) {
		i++
	}
	j := 0
	for j < len(a)-i && j < len(b)-i && sameRoute(&a[len(a)-1-j], &b[len(b)-1-j]) {
		j++
	}
	removed, added = a[i:len(a)-j], b[i:len(b)-j]
	return removed, added, len(removed)+len(added) <= MaxRouteEdit
}

// sameRoute reports whether two routes are the same but for their Origin.
// It names every field of intent.Route (TestSameRouteNamesEveryField).
func sameRoute(a, b *intent.Route) bool {
	return a.To == b.To && a.Via == b.Via && a.Dev == b.Dev && a.OnLink == b.OnLink &&
		slices.Equal(a.Nexthops, b.Nexthops) && a.Table == b.Table && a.Metric == b.Metric &&
		a.Scope == b.Scope && a.Src == b.Src && a.Type == b.Type && a.MTU == b.MTU &&
		a.Pref == b.Pref && a.Family == b.Family && a.Drift == b.Drift
}

// mayBeOnLink reports whether the index could take r as an on-link route
// (index.addOnLink), whose device other routes' gateways may resolve to.
func mayBeOnLink(r *intent.Route) bool {
	return r.Dev != "" && r.Via == "" && len(r.Nexthops) == 0
}

// onLinkRoutes returns, by file, the routes of files that may be on-link,
// in order; ok is false when there are more than maxOnLinkContext.
func onLinkRoutes(files map[string]*intent.Intent) (map[string][]intent.Route, bool) {
	out := map[string][]intent.Route{}
	n := 0
	for name, in := range files {
		if in == nil {
			continue
		}
		for i := range in.Routes {
			if mayBeOnLink(&in.Routes[i]) {
				if n++; n > maxOnLinkContext {
					return nil, false
				}
				out[name] = append(out[name], in.Routes[i])
			}
		}
	}
	return out, true
}

// renderContext renders files with only their on-link routes, and routes
// added to those of file name; none of those may be on-link routes.
func renderContext(files map[string]*intent.Intent, facts Facts, onLink map[string][]intent.Route, name string, routes []intent.Route) (*dg.Graph, DriftPolicies, error) {
	for i := range routes {
		if mayBeOnLink(&routes[i]) {
			return nil, nil, errOnLink
		}
	}
	ctx := make(map[string]*intent.Intent, len(files))
	for f, in := range files {
		if in == nil {
			ctx[f] = nil
			continue
		}
		c := *in
		c.Routes = slices.Clip(onLink[f])
		if f == name {
			c.Routes = append(slices.Clone(onLink[f]), routes...)
		}
		ctx[f] = &c
	}
	g, err := RenderFilesWith(ctx, facts)
	if err != nil {
		return nil, nil, err
	}
	d, err := DriftOf(ctx)
	return g, d, err
}

// errOnLink is renderContext's refusal of an on-link route among those
// added.
var errOnLink = &intent.FieldError{Path: "routes", Msg: "an on-link route is rendered whole"}

// newRoutes returns the route nodes of g that base does not have.
func newRoutes(g, base *dg.Graph) []*dg.Node {
	var out []*dg.Node
	for _, n := range g.Nodes() {
		if n.Type() == items.TypeRoute && !base.Contains(n.Ref()) {
			out = append(out, n)
		}
	}
	return out
}

// Apply makes g, the graph rendered from the set before the edit (or a
// copy of it, synced), the one rendered after it: it deletes the removed
// items that are not added again and puts the added ones that differ from
// what g holds, each into the subgraph of the edit's file.
func (e RouteEdit) Apply(g *dg.Graph) {
	added := make(map[dg.ItemRef]bool, len(e.Added))
	for _, it := range e.Added {
		added[dg.Ref(it)] = true
	}
	for _, ref := range e.Removed {
		if !added[ref] {
			g.Delete(ref)
		}
	}
	if len(e.Added) == 0 {
		return
	}
	scope := SubgraphName(e.File)
	sub := g
	if scope != "" {
		sub = g.EditSubGraph(scope)
	}
	created := dg.StateData{State: dg.StateCreated}
	for _, it := range e.Added {
		n := g.NodeFor(dg.Ref(it))
		if n.Present() && n.Scope() == scope && reflect.DeepEqual(n.Item(), it) {
			continue
		}
		sub.PutAt(n, it, created)
	}
}
