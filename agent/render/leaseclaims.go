package render

import (
	"fmt"
	"net/netip"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// A lease never takes over what the intent puts on its own links. A DHCP
// server is not the operator: render checks what a lease gives against
// the claims of the intent (claims), and leaves out what would take
// traffic the intent sends elsewhere, saying why on the lease item
// (items.DHCP4Lease.Refused, items.DHCP6Lease.Refused).
//
// A claim is a prefix the intent puts on a link other than the lease's,
// or routes elsewhere: every declared address of another interface (its
// subnet), and every route of table main (where lease routes go) whose
// device is another interface (its dev, or that of the declared subnet
// holding its gateway; a multipath route when any nexthop's is) or that
// goes nowhere (blackhole, unreachable, prohibit). A route through a
// gateway that nothing declared holds is no claim: it may well go through
// the lease.
//
// The kernel routes by the longest prefix, so a lease route takes traffic
// from a claim exactly when its destination is equal to the claim's or
// inside it (more specific); a less specific lease route (10.0.0.0/8 with
// mgmt0 on 10.99.0.0/24) leaves the claim's traffic where it is, and is
// kept. So:
//
//   - the lease's address is refused, and with it everything of the lease
//     (address and routes), when another interface of the intent holds the
//     same address, when the leased subnet overlaps the subnet of an
//     address of another interface (either way: the two links would share
//     a network), or, for DHCPv4, when the leased subnet (the kernel's
//     prefix route for it) is equal to or inside a claimed route other
//     than a default route (every connected subnet is inside the default
//     route: a default route is the last resort, no claim on the uplink's
//     own network);
//   - a lease route (the default route through the router of option 3,
//     the classless routes of option 121) is left out when its destination
//     is equal to or inside a claim, the intent's default route included
//     (the intent's explicit default wins over the lease's), or when its
//     gateway is an address of the intent or inside the subnet of another
//     interface's address (the lease's traffic would go to a host on that
//     link).
//
// A protected link's subnets and routes are claims like any other: a lease
// never touches them. Refusals are not errors of the intent: the rest of
// the intent renders, and the lease item stays (the lease is still held
// and renewed), carrying the reasons.

// claim is a prefix the intent puts on a link (dev) or routes nowhere (dev
// ""), and what it is, for the refusal's reason.
type claim struct {
	dev    string
	prefix netip.Prefix // masked
	route  bool         // a route's destination; else an address's subnet
	addr   netip.Addr   // an address's own address
	what   string
}

// leaseClaims returns the claims of the intent (see above), in intent
// order: the declared addresses, then the routes of table main. Only
// called when a lease is known.
func (x *index) leaseClaims(in *intent.Intent) []claim {
	var out []claim
	for _, a := range x.addrs {
		out = append(out, claim{dev: a.dev, prefix: a.prefix.Masked(), addr: a.own(),
			what: fmt.Sprintf("%s's address %s", a.dev, a.prefix)})
	}
	hops := map[string][]string{} // via -> devices: routes share a few gateways
	for i := range in.Routes {
		r := &in.Routes[i]
		if r.EffectiveTable() != items.TableMain {
			continue
		}
		dst, err := r.Dst()
		if err != nil {
			continue
		}
		for _, dev := range x.routeDevs(r, hops) {
			out = append(out, claim{dev: dev, prefix: dst.Masked(), route: true, what: routeClaim(r, dst, dev)})
		}
	}
	return out
}

// routeDevs returns the devices a route of the intent goes out of, "" for
// one that goes nowhere (a blackhole, ...); none when it goes through a
// gateway nothing declared holds. hops memoizes the devices of the
// gateways of routes without a device.
func (x *index) routeDevs(r *intent.Route, hops map[string][]string) []string {
	if r.EffectiveType() != intent.RouteUnicast {
		return []string{""}
	}
	if len(r.Nexthops) == 0 {
		return x.hopDev(r.Dev, r.Via, hops)
	}
	var out []string
	for _, n := range r.Nexthops {
		out = append(out, x.hopDev(n.Dev, n.Via, hops)...)
	}
	return out
}

// hopDev is routeDevs for one path of a route of table main: dev, else the
// device of the declared subnet that holds via.
func (x *index) hopDev(dev, via string, hops map[string][]string) []string {
	if dev != "" {
		return []string{dev}
	}
	if devs, ok := hops[via]; ok {
		return devs
	}
	var devs []string
	if gw, err := netip.ParseAddr(via); err == nil {
		if h, ok := x.gatewayHop(gw, items.TableMain); ok {
			devs = []string{h.dev}
		}
	}
	hops[via] = devs
	return devs
}

func routeClaim(r *intent.Route, dst netip.Prefix, dev string) string {
	switch {
	case dev == "":
		return fmt.Sprintf("the intent's %s route to %s", r.EffectiveType(), dst)
	case r.Via != "":
		return fmt.Sprintf("the intent's route to %s via %s on %s", dst, r.Via, dev)
	}
	return fmt.Sprintf("the intent's route to %s on %s", dst, dev)
}

// addressRefusal says why a leased address p on dev is refused ("": it is
// not): see the package's rules above. connected: p's subnet is a route
// of the kernel's (DHCPv4), to check against the route claims.
func addressRefusal(claims []claim, dev string, p netip.Prefix, connected bool) string {
	subnet := p.Masked()
	for _, c := range claims {
		if c.dev == dev {
			continue
		}
		switch {
		case !c.route && c.addr == p.Addr():
			return fmt.Sprintf("leased address %s is %s", p, c.what)
		case !c.route && c.prefix.Overlaps(subnet):
			return fmt.Sprintf("leased address %s overlaps %s", p, c.what)
		case c.route && connected && c.prefix.Bits() > 0 && c.prefix.Contains(subnet.Addr()) && subnet.Bits() >= c.prefix.Bits():
			return fmt.Sprintf("leased subnet %s would take traffic from %s", subnet, c.what)
		}
	}
	return ""
}

// routeRefusal says why a lease route on dev is left out ("": it is not).
func routeRefusal(claims []claim, dev string, r *items.Route) string {
	for _, c := range claims {
		if c.dev == dev && c.route {
			continue
		}
		if r.Gw.IsValid() && !c.route && (c.addr == r.Gw || (c.dev != dev && c.prefix.Contains(r.Gw))) {
			return fmt.Sprintf("lease route to %s: gateway %s is on %s", r.Dst, r.Gw, c.what)
		}
		if c.dev != dev && c.prefix.Contains(r.Dst.Addr()) && r.Dst.Bits() >= c.prefix.Bits() {
			return fmt.Sprintf("lease route to %s would take traffic from %s", r.Dst, c.what)
		}
	}
	return ""
}
