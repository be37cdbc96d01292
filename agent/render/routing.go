package render

import (
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// routes renders every route.
func (b *builder) routes() {
	for i := range b.in.Routes {
		r := &b.in.Routes[i]
		at := locate(r.Origin, "routes", i)
		if r.Dev != "" {
			if _, ok := b.deviceRef(field(at, "dev"), r.Dev); !ok {
				continue
			}
		}
		if !b.nexthopDevs(r, at) {
			continue
		}
		b.put(b.routeItem(r), at)
	}
}

// routeItem converts a route with its defaults made explicit, and fills
// the fields that shape its dependencies: the carrier of a physical
// device, the declared address that puts the gateway on-link, and the
// declared address holding the preferred source.
func (b *builder) routeItem(r *intent.Route) *items.Route {
	dst, _ := r.Dst() // Validate checked it
	it := &items.Route{
		Dst:    dst,
		Gw:     optAddr(r.Via),
		Dev:    r.Dev,
		Table:  r.EffectiveTable(),
		Metric: r.EffectiveMetric(),
		Scope:  routeScope(r),
		Src:    optAddr(r.Src),
		Kind:   routeKinds[r.EffectiveType()],
		OnLink: r.OnLink,
		MTU:    r.MTU,
		Pref:   routePrefs[r.EffectivePref()],
	}
	if len(r.Nexthops) > 0 {
		b.multipath(it, r)
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
	if it.Src.IsValid() {
		if a, ok := b.idx.holding(it.Src); ok && a.name() != it.GwAddress {
			it.Deps = append(it.Deps, items.AddressRef(a.dev, a.prefix))
		}
	}
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
			it.Deps = append(it.Deps, items.AddressRef(a.dev, a.prefix))
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
	hop, ok := b.idx.gatewayHop(it.Gw, it.TableID())
	if !ok {
		return
	}
	if b.idx.isPhysical(hop.dev) {
		it.CarrierLink = hop.dev
	}
	if hop.route != (dg.ItemRef{}) {
		it.Deps = append(it.Deps, hop.route)
	} else {
		it.GwAddress = items.AddressName(hop.dev, hop.prefix)
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
// gateway, global otherwise (IPv6 routes have no scope).
func routeScope(r *intent.Route) items.Scope {
	if r.Scope != "" {
		return scopes[r.Scope]
	}
	return defaultScope(r.EffectiveFamily() == intent.FamilyIPv4, r.EffectiveType() == intent.RouteUnicast,
		r.Via != "" || len(r.Nexthops) > 0)
}

// defaultScope is the scope `ip route add` gives a route of that family,
// type and gateway presence.
func defaultScope(ipv4, unicast, gateway bool) items.Scope {
	if ipv4 && unicast && !gateway {
		return items.ScopeLink
	}
	return items.ScopeUniverse
}

// rules renders every rule. A rule depends on the interfaces it names that
// the intent declares (on its veth for a veth peer); others may be foreign.
// A goto rule depends on the rules of its family at the priority it jumps
// to, so that it is never left pointing at nothing (the kernel marks such
// a rule unresolved and skips it).
func (b *builder) rules() {
	list := make([]*items.Rule, len(b.in.Rules))
	for i := range b.in.Rules {
		list[i] = ruleItem(&b.in.Rules[i])
		list[i].Deps = b.ruleDeps(b.in.Rules[i].IIF, b.in.Rules[i].OIF)
	}
	for i, it := range list {
		if it.Action == items.RuleGoto {
			var targets []dg.ItemRef
			for _, t := range list {
				if t.Priority == it.Goto && t.Family == it.Family {
					targets = append(targets, dg.Ref(t))
				}
			}
			slices.SortFunc(targets, func(a, b dg.ItemRef) int { return strings.Compare(a.Name, b.Name) })
			it.Deps = append(it.Deps, targets...)
		}
		b.put(it, locate(b.in.Rules[i].Origin, "rules", i))
	}
}

// ruleItem converts a rule (without its dependencies).
func ruleItem(r *intent.Rule) *items.Rule {
	it := &items.Rule{
		Priority: r.Priority,
		Family:   families[r.EffectiveFamily()],
		From:     ruleSelector(r.From),
		To:       ruleSelector(r.To),
		Mark:     r.FwMark,
		Mask:     r.FwMask,
		IifName:  r.IIF,
		OifName:  r.OIF,
		IPProto:  intent.ParseIPProto(r.IPProto),
		SPort:    portRange(r.SPort),
		DPort:    portRange(r.DPort),
		Invert:   r.Not,
		Action:   ruleActions[r.EffectiveAction()],
		Table:    r.Table,
		Goto:     r.Goto,
	}
	if r.UIDRange != "" {
		start, end := intent.ParseRange(r.UIDRange)
		it.UIDs = &items.UIDRange{Start: start, End: end}
	}
	if p := r.SuppressPrefixlength; p != nil {
		v := uint8(*p)
		it.SuppressPrefixlen = &v
	}
	return it
}

// portRange converts a sport or dport ("" is none).
func portRange(s string) items.PortRange {
	if s == "" {
		return items.PortRange{}
	}
	start, end := intent.ParseRange(s)
	return items.PortRange{Start: uint16(start), End: uint16(end)}
}

var ruleActions = map[intent.RuleAction]items.RuleAction{
	intent.ActionLookup:      items.RuleLookup,
	intent.ActionGoto:        items.RuleGoto,
	intent.ActionBlackhole:   items.RuleBlackhole,
	intent.ActionUnreachable: items.RuleUnreachable,
	intent.ActionProhibit:    items.RuleProhibit,
}

var families = map[intent.Family]items.Family{intent.FamilyIPv4: items.FamilyIPv4, intent.FamilyIPv6: items.FamilyIPv6}

// ruleDeps returns the interface items that the named interfaces are, in
// order and without duplicates.
func (b *builder) ruleDeps(names ...string) []dg.ItemRef {
	var deps []dg.ItemRef
	for _, n := range names {
		owner := n
		if veth, ok := b.idx.peers[n]; ok {
			owner = veth.Name
		} else if _, ok := b.idx.ifaces[n]; !ok {
			continue
		}
		if ref := items.InterfaceRef(owner); !containsRef(deps, ref) {
			deps = append(deps, ref)
		}
	}
	return deps
}

func containsRef(refs []dg.ItemRef, ref dg.ItemRef) bool {
	for _, r := range refs {
		if r == ref {
			return true
		}
	}
	return false
}

// optPrefix parses an optional prefix ("" gives the zero Prefix).
func optPrefix(s string) netip.Prefix {
	p, _ := netip.ParsePrefix(s) // Validate checked it
	return p
}

// ruleSelector is a rule's from or to: the zero Prefix for none and for a
// prefix of length 0 ("0.0.0.0/0", "::/0"), which the kernel keeps as none.
func ruleSelector(s string) netip.Prefix {
	if p := optPrefix(s); p.Bits() > 0 {
		return p
	}
	return netip.Prefix{}
}

// neighbors renders every neighbor entry.
func (b *builder) neighbors() {
	for i := range b.in.Neighbors {
		n := &b.in.Neighbors[i]
		at := locate(n.Origin, "neighbors", i)
		if _, ok := b.deviceRef(field(at, "dev"), n.Dev); !ok {
			continue
		}
		mac, _ := net.ParseMAC(n.MAC) // Validate checked it
		b.put(&items.Neighbor{Dev: n.Dev, IP: optAddr(n.IP), MAC: mac, Deps: b.portsOf(n.Dev)}, at)
	}
}

// portsOf returns the port items a neighbour on dev waits for: the
// declared ports of dev and, for a VLAN, of the interfaces below it, in name
// order. Enslaving a port can change a bond's or bridge's MAC (a bridge
// takes its lowest port's, a bond its first's), and a VLAN follows its
// parent's MAC; each change makes the kernel flush the device's
// neighbours, permanent ones too, so the neighbour is created after the
// ports. A MAC the intent sets stays, so it ends the walk.
func (b *builder) portsOf(dev string) []dg.ItemRef {
	var deps []dg.ItemRef
	for seen := map[string]bool{}; !seen[dev]; {
		seen[dev] = true
		ifc, ok := b.idx.ifaces[dev]
		if !ok || ifc.MAC != "" {
			break
		}
		for _, name := range b.idx.ports[dev] {
			deps = append(deps, dg.ItemRef{Type: items.TypePort, Name: name})
		}
		if ifc.Type != intent.LinkVLAN || ifc.VLAN == nil {
			break
		}
		dev = ifc.VLAN.Parent
	}
	return deps
}
