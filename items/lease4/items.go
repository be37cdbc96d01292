package lease4

import (
	"net/netip"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// RouteOptions say what of a lease becomes routes (the intent's dhcp4
// useRoutes and routeMetric) and whether the interface is physical (its
// routes then follow its carrier).
type RouteOptions struct {
	UseRoutes bool
	Metric    uint32
	Physical  bool
}

// LeaseItems returns the items a held lease makes, each depending on the
// lease item: the address (valid until the lease expires: the kernel
// drops it then, also without the agent), and with UseRoutes the routes: the classless
// routes of option 121 when the server sent any (RFC 3442: the router of
// option 3 is then ignored), else a default route through the router.
// Routes prefer the lease's address as source (as networkd does); a
// gateway outside the leased subnet is taken as on the link.
func Items(l *Lease, o RouteOptions) []dg.Item {
	lease := items.DHCP4LeaseRef(l.Interface)
	out := []dg.Item{&items.Address{Dev: l.Interface, Prefix: l.Address, ValidUntil: l.Expires(), Deps: []dg.ItemRef{lease}}}
	if !o.UseRoutes {
		return out
	}
	routes := l.Routes
	if len(routes) == 0 && l.Router.IsValid() {
		routes = []Route{{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: l.Router}}
	}
	for _, r := range routes {
		out = append(out, leaseRoute(l, r, o, lease))
	}
	return out
}

func leaseRoute(l *Lease, r Route, o RouteOptions, lease dg.ItemRef) *items.Route {
	rt := &items.Route{Dst: r.Dst, Dev: l.Interface, Metric: o.Metric, Src: l.Address.Addr(),
		GwAddress: items.AddressName(l.Interface, l.Address), Deps: []dg.ItemRef{lease}}
	if o.Physical {
		rt.CarrierLink = l.Interface
	}
	switch {
	case !r.Via.IsValid():
		rt.Scope = items.ScopeLink
	case l.Address.Masked().Contains(r.Via):
		rt.Gw = r.Via
	default:
		rt.Gw, rt.OnLink = r.Via, true
	}
	return rt
}
