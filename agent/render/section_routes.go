package render

import (
	"net/netip"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// The routes section.
var routesSection = section{
	path:       "routes",
	addToIndex: (*index).addRoutes,
	render:     (*builder).routes,
	refs: func(it dg.Item) []string {
		if r, ok := it.(*items.Route); ok {
			return []string{r.Dev}
		}
		return nil
	},
	toIntent: func(inv *inverter, out *intent.Intent) {
		for _, r := range sectionItems[*items.Route](inv) {
			out.Routes = append(out.Routes, routeToIntent(r))
		}
	},
}

// addRoutes indexes the on-link routes.
func (x *index) addRoutes(in *intent.Intent) {
	for i := range in.Routes {
		x.addOnLink(&in.Routes[i])
	}
}

// addOnLink indexes r if it is an on-link route: unicast, with dev and no
// gateway.
func (x *index) addOnLink(r *intent.Route) {
	if r.Dev == "" || r.Via != "" || len(r.Nexthops) > 0 || r.EffectiveType() != intent.RouteUnicast {
		return
	}
	dst, err := r.Dst()
	if err != nil {
		return
	}
	ref := dg.Ref(&items.Route{Dst: dst, Table: r.EffectiveTable(), Metric: r.EffectiveMetric()})
	x.onLinkRoutes = append(x.onLinkRoutes, hop{dev: r.Dev, prefix: dst, table: r.EffectiveTable(), route: ref})
}

// routes renders every route.
func (b *builder) routes() {
	for i := range b.in.Routes {
		r := &b.in.Routes[i]
		if _, known := b.idx.ifaces[r.Dev]; r.Dev != "" && !known {
			at := b.in.Locate(r.Origin, "routes", i)
			b.deviceRef(field(at, "dev"), r.Dev) // says why, at the path made only now
			continue
		}
		if len(r.Nexthops) > 0 && !b.nexthopDevs(r, b.in.Locate(r.Origin, "routes", i)) {
			continue
		}
		b.object(r.Drift, r.Origin)
		b.putObject(b.routeItem(r), r.Origin, "routes", i)
	}
}

// routeItem converts a route with its defaults made explicit, and fills
// the fields that shape its dependencies: the carrier of a physical
// device, the declared address that puts the gateway on-link, and the
// declared address holding the preferred source.
func (b *builder) routeItem(r *intent.Route) *items.Route {
	dst, _ := r.Dst() // Validate checked it
	family := r.Family
	if family == "" && r.To != "default" {
		family = intent.FamilyIPv6 // r.EffectiveFamily, without parsing To again
		if dst.Addr().Is4() {
			family = intent.FamilyIPv4
		}
	} else if family == "" {
		family = r.EffectiveFamily()
	}
	metric := r.Metric
	if metric == 0 && family == intent.FamilyIPv6 {
		metric = intent.IPv6DefaultMetric
	}
	it := &items.Route{
		Dst:    dst,
		Gw:     b.gateway(r.Via),
		Dev:    r.Dev,
		Table:  r.EffectiveTable(),
		Metric: metric,
		Scope:  routeScope(r, family),
		Src:    optAddr(r.Src),
		Kind:   routeKinds[r.EffectiveType()],
		OnLink: r.OnLink,
		MTU:    r.MTU,
		Pref:   routePrefs[r.EffectivePref()],
	}
	if len(r.Nexthops) > 0 {
		b.multipath(it, r)
		for _, n := range r.Nexthops {
			for _, ref := range b.vrfPort(n.Dev) {
				if !containsRef(it.Deps, ref) {
					it.Deps = append(it.Deps, ref)
				}
			}
		}
		return it
	}
	switch {
	case r.Dev == "" && it.Gw.IsValid():
		b.gatewayDeps(it)
	case it.Gw.IsValid():
		if a, ok := b.idx.onLink(it.Gw, r.Dev); ok {
			it.GwAddress = a.name()
		}
	}
	if b.idx.isPhysical(r.Dev) {
		it.CarrierLink = r.Dev
	}
	b.leaseDeps(it, r.Dev) // dhcp4.go
	if it.Src.IsValid() {
		if a, ok := b.idx.holding(it.Src); ok && a.name() != it.GwAddress {
			it.Deps = append(it.Deps, dg.ItemRef{Type: items.TypeAddress, Name: a.name()})
		}
	}
	it.Deps = append(it.Deps, b.vrfPort(r.Dev)...)
	return it
}

// nexthopDevs checks the devices of a multipath route's nexthops.
func (b *builder) nexthopDevs(r *intent.Route, at intent.Origin) bool {
	ok := true
	for i, n := range r.Nexthops {
		if n.Dev != "" {
			if _, found := b.deviceRef(field(element(field(at, "nexthops"), i), "dev"), n.Dev); !found {
				ok = false
			}
		}
	}
	return ok
}

// multipath fills a multipath route's nexthops and their dependencies:
// each nexthop's device (items.Route.Dependencies) and the declared address
// that puts its gateway on-link (in Deps, after the source's). A multipath
// route has no CarrierLink: one nexthop's link going down does not take
// the route with it.
func (b *builder) multipath(it *items.Route, r *intent.Route) {
	for _, n := range r.Nexthops {
		hop := items.Nexthop{Gw: optAddr(n.Via), Dev: n.Dev, Weight: uint16(n.Weight), OnLink: n.OnLink}
		if hop.Weight == 0 {
			hop.Weight = 1
		}
		it.Nexthops = append(it.Nexthops, hop)
	}
	if it.Src.IsValid() {
		if a, ok := b.idx.holding(it.Src); ok {
			it.Deps = append(it.Deps, dg.ItemRef{Type: items.TypeAddress, Name: a.name()})
		}
	}
	for _, n := range it.Nexthops {
		if !n.Gw.IsValid() {
			continue
		}
		a, ok := b.idx.onLink(n.Gw, n.Dev)
		if !ok && n.Dev == "" {
			if hop, found := b.idx.gatewayHop(n.Gw, it.TableID()); found && hop.route == (dg.ItemRef{}) {
				a, ok = declaredAddr{dev: hop.dev, prefix: hop.prefix}, true
			}
		}
		if ref := items.AddressRef(a.dev, a.prefix); ok && !containsRef(it.Deps, ref) {
			it.Deps = append(it.Deps, ref)
		}
	}
}

var routePrefs = map[intent.RoutePref]items.RoutePref{
	intent.PrefMedium: items.RoutePrefMedium,
	intent.PrefLow:    items.RoutePrefLow,
	intent.PrefHigh:   items.RoutePrefHigh,
}

// gatewayDeps fills the dependencies of a route with a gateway and no
// device from the device the kernel will pick (index.gatewayHop), so that
// it is treated as the same route with dev: it waits for the subnet that
// holds the gateway (the address, or the on-link route), and for the
// carrier of a physical device. When nothing declared holds the gateway,
// the route has neither: the kernel may still reach it through a foreign
// address or route, which netagent does not track.
func (b *builder) gatewayDeps(it *items.Route) {
	hop, ok := b.gatewayHop(it.Gw, it.TableID())
	if !ok {
		return
	}
	if b.idx.isPhysical(hop.dev) {
		it.CarrierLink = hop.dev
	}
	if hop.route != (dg.ItemRef{}) {
		it.Deps = append(it.Deps, hop.route)
	} else {
		it.GwAddress = hop.addr
	}
}

var routeKinds = map[intent.RouteType]items.RouteType{
	intent.RouteUnicast:     items.RouteUnicast,
	intent.RouteBlackhole:   items.RouteBlackhole,
	intent.RouteUnreachable: items.RouteUnreachable,
	intent.RouteProhibit:    items.RouteProhibit,
}

var scopes = map[intent.Scope]items.Scope{
	intent.ScopeGlobal: items.ScopeUniverse,
	intent.ScopeLink:   items.ScopeLink,
	intent.ScopeHost:   items.ScopeHost,
}

// routeScope returns the route's scope, or the one `ip route add` picks
// when the intent leaves it out: link for an IPv4 unicast route without a
// gateway, global otherwise (IPv6 routes have no scope). family is the
// route's EffectiveFamily.
func routeScope(r *intent.Route, family intent.Family) items.Scope {
	if r.Scope != "" {
		return scopes[r.Scope]
	}
	return defaultScope(family == intent.FamilyIPv4, r.EffectiveType() == intent.RouteUnicast,
		r.Via != "" || len(r.Nexthops) > 0)
}

// gatewayHop is index.gatewayHop, asked once for a run of routes through
// the same gateway in the same table (the index does not change while
// the routes render).
func (b *builder) gatewayHop(gw netip.Addr, table uint32) (hop, bool) {
	c := &b.lastHop
	if !c.valid || c.gw != gw || c.table != table {
		h, ok := b.idx.gatewayHop(gw, table)
		*c = hopMemo{valid: true, gw: gw, table: table, hop: h, ok: ok}
	}
	return c.hop, c.ok
}

// hopMemo is the last answer of index.gatewayHop (see builder.gatewayHop).
type hopMemo struct {
	valid bool
	gw    netip.Addr
	table uint32
	hop   hop
	ok    bool
}

// gateway parses a route's optional gateway, once for a run of routes
// through the same one.
func (b *builder) gateway(via string) netip.Addr {
	if via != b.lastGw {
		b.lastGw, b.lastGwAddr = via, optAddr(via)
	}
	return b.lastGwAddr
}

// defaultScope is the scope `ip route add` gives a route of that family,
// type and gateway presence.
func defaultScope(ipv4, unicast, gateway bool) items.Scope {
	if ipv4 && unicast && !gateway {
		return items.ScopeLink
	}
	return items.ScopeUniverse
}

// routeToIntent converts a Route item, leaving out the defaults.
func routeToIntent(r *items.Route) intent.Route {
	ipv6 := r.Family() == items.FamilyIPv6
	out := intent.Route{
		To:     r.Dst.String(),
		Via:    addrString(r.Gw),
		Dev:    r.Dev,
		Metric: r.EffectiveMetric(),
		Src:    addrString(r.Src),
		Type:   routeTypeNames[r.Kind],
	}
	if r.Dst.Bits() == 0 {
		out.To = "default"
		if ipv6 && out.Via == "" && out.Src == "" {
			out.Family = intent.FamilyIPv6
		}
	}
	if t := r.TableID(); t != items.TableMain {
		out.Table = intent.TableID(t)
	}
	if ipv6 && out.Metric == items.IPv6DefaultMetric {
		out.Metric = 0
	}
	if r.Scope != defaultScope(!ipv6, r.Kind == items.RouteUnicast, r.Gw.IsValid() || len(r.Nexthops) > 0) {
		out.Scope = scopeNames[r.Scope]
	}
	out.OnLink, out.MTU = r.OnLink, r.MTU
	if r.Pref != items.RoutePrefMedium {
		out.Pref = routePrefNames[r.Pref]
	}
	for _, n := range r.Nexthops {
		hop := intent.Nexthop{Via: addrString(n.Gw), Dev: n.Dev, OnLink: n.OnLink}
		if w := n.EffectiveWeight(); w != 1 {
			hop.Weight = int(w)
		}
		out.Nexthops = append(out.Nexthops, hop)
	}
	if len(r.Nexthops) > 0 && r.Dst.Bits() == 0 && ipv6 {
		out.Family = "" // the nexthops' vias say it
	}
	return out
}

var routePrefNames = map[items.RoutePref]intent.RoutePref{
	items.RoutePrefLow:  intent.PrefLow,
	items.RoutePrefHigh: intent.PrefHigh,
}

var routeTypeNames = map[items.RouteType]intent.RouteType{
	items.RouteBlackhole:   intent.RouteBlackhole,
	items.RouteUnreachable: intent.RouteUnreachable,
	items.RouteProhibit:    intent.RouteProhibit,
}

var scopeNames = map[items.Scope]intent.Scope{
	items.ScopeUniverse: intent.ScopeGlobal,
	items.ScopeLink:     intent.ScopeLink,
	items.ScopeHost:     intent.ScopeHost,
}
