package lease4

import (
	"net/netip"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// RouteOptions say what of a lease becomes routes (the intent's dhcp4
// useRoutes, useDNS and routeMetric) and whether the interface is
// physical (its routes then follow its carrier).
type RouteOptions struct {
	UseRoutes bool
	UseDNS    bool
	Metric    uint32
	Physical  bool
}

// Items returns the items a held lease makes, each depending on the
// lease item, as systemd-networkd makes them of a lease (in the main
// table, by default; networkd-dhcp4.c): the address (valid until the
// lease expires: the kernel drops it then, also without the agent), its
// subnet's route at the lease's metric (the address's RouteMetric: the
// kernel's prefix route), and with UseRoutes the routes:
//
//   - the classless routes of option 121 when the server sent any (RFC
//     3442: the router of option 3 is then ignored), else a default
//     route through the router;
//   - for each of them through a gateway, a host route to the gateway on
//     the link (scope link), so that a gateway the netmask leaves out is
//     reachable;
//   - with UseDNS, a host route to each DNS server (networkd's
//     RoutesToDNS=, on by default): on the link when the server is in the
//     leased subnet, or when the classless route that covers it best is
//     the default route and it is in the subnet; else through the gateway of the
//     classless route that covers it best, or without classless routes through the
//     router (with the gateway's host route); a server no route reaches
//     gets none.
//
// Every route has the lease's metric and prefers the lease's address as
// source (as networkd does); a gateway outside the leased subnet is
// taken as on the link. Routes of one destination are made once. Unlike
// networkd, no route goes to NTP servers (option 42 is not asked for),
// and without UseRoutes none to the DNS servers.
func Items(l *Lease, o RouteOptions) []dg.Item {
	lease := items.DHCP4LeaseRef(l.Interface)
	out := []dg.Item{&items.Address{Dev: l.Interface, Prefix: l.Address, ValidUntil: l.Expires(), RouteMetric: o.Metric,
		Deps: []dg.ItemRef{lease}}}
	if !o.UseRoutes {
		return out
	}
	b := routeBuilder{l: l, o: o, lease: lease, seen: map[netip.Prefix]bool{}}
	for _, r := range b.leaseRoutes() {
		b.add(r)
	}
	if o.UseDNS {
		for _, d := range l.DNS {
			if via, ok := b.toServer(d); ok {
				b.add(Route{Dst: netip.PrefixFrom(d, 32), Via: via})
			}
		}
	}
	return append(out, b.out...)
}

// routeBuilder collects the routes of a lease, each destination once.
type routeBuilder struct {
	l     *Lease
	o     RouteOptions
	lease dg.ItemRef
	seen  map[netip.Prefix]bool
	out   []dg.Item
}

// leaseRoutes are the classless routes, else the default route through
// the router.
func (b *routeBuilder) leaseRoutes() []Route {
	if len(b.l.Routes) > 0 {
		return b.l.Routes
	}
	if b.l.Router.IsValid() {
		return []Route{{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: b.l.Router}}
	}
	return nil
}

// add adds r, and before it the host route to its gateway.
func (b *routeBuilder) add(r Route) {
	if r.Via.IsValid() {
		b.put(Route{Dst: netip.PrefixFrom(r.Via, 32)})
	}
	b.put(r)
}

func (b *routeBuilder) put(r Route) {
	if b.seen[r.Dst] || r.Dst.Addr() == b.l.Address.Addr() && r.Dst.IsSingleIP() {
		return // made already; or the lease's own address, which the kernel's local route holds
	}
	b.seen[r.Dst] = true
	b.out = append(b.out, leaseRoute(b.l, r, b.o, b.lease))
}

// toServer is the gateway of the route to the server at d (networkd's
// dhcp4_find_gateway_for_destination): invalid for one on the link; ok
// is false when no route of the lease reaches it.
func (b *routeBuilder) toServer(d netip.Addr) (via netip.Addr, ok bool) {
	inSubnet := b.l.Address.Masked().Contains(d)
	best := -1
	for _, r := range b.l.Routes {
		if r.Dst.Contains(d) && r.Dst.Bits() >= best {
			best, via = r.Dst.Bits(), r.Via
		}
	}
	switch {
	case inSubnet:
		return netip.Addr{}, true // on the link, whatever covers it
	case best >= 0:
		return via, true
	case len(b.l.Routes) == 0 && b.l.Router.IsValid():
		return b.l.Router, true
	}
	return netip.Addr{}, false
}

// leaseRoute is the route item of r: it needs the lease's address, as
// the one that puts its gateway on the link (GwAddress) or, for a route
// on the link or through a gateway outside the subnet, as its source
// (an address dependency in Deps): read-back anchors each so (package l3).
func leaseRoute(l *Lease, r Route, o RouteOptions, lease dg.ItemRef) *items.Route {
	rt := &items.Route{Dst: r.Dst, Dev: l.Interface, Metric: o.Metric, Src: l.Address.Addr(), Deps: []dg.ItemRef{lease}}
	if o.Physical {
		rt.CarrierLink = l.Interface
	}
	switch {
	case !r.Via.IsValid():
		rt.Scope = items.ScopeLink
	case l.Address.Masked().Contains(r.Via):
		rt.Gw, rt.GwAddress = r.Via, items.AddressName(l.Interface, l.Address)
		return rt
	default:
		rt.Gw, rt.OnLink = r.Via, true
	}
	rt.Deps = append(rt.Deps, items.AddressRef(l.Interface, l.Address))
	return rt
}
