package render

import (
	"net/netip"
	"slices"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// index is what rendering one object needs to know about the others: the
// declared interfaces, the veth peers and the declared addresses.
type index struct {
	ifaces map[string]*intent.Interface
	// peers maps the name of a veth peer in this namespace to its veth.
	peers map[string]*intent.Interface
	// addrs lists the declared addresses in intent order.
	addrs []declaredAddr
	// onLinkRoutes lists the declared on-link routes in intent order.
	onLinkRoutes []hop
	// dhcp4 maps each interface with dhcp4 to whether its lease is known
	// (Facts).
	dhcp4 map[string]bool
	// claims are what the intent puts on its links, for the leases to be
	// checked against (leaseclaims.go); made only when a lease is known.
	claims []claim
	// refused4 says why the address of an interface's DHCPv4 lease is
	// refused (leaseclaims.go), by interface.
	refused4 map[string]string
	// refused6 is refused4 for the DHCPv6 leases' addresses.
	refused6 map[string]string
	// ports maps a master's name to the names of its declared ports, in
	// name order.
	ports map[string][]string
}

// hop is a declared subnet on a device through which the kernel reaches a
// gateway: a declared address's (route is zero), or an on-link route's (a
// unicast route with dev and no gateway) in table.
type hop struct {
	dev    string
	prefix netip.Prefix
	table  uint32
	route  dg.ItemRef
	addr   string // an address's item Name (declaredAddr.name)
	// self is the address's own address, which is no gateway; the zero
	// Addr: prefix's (an on-link route's, or an address without a peer).
	self netip.Addr
}

// own is the address of h that is no gateway (see self).
func (h hop) own() netip.Addr {
	if h.self.IsValid() {
		return h.self
	}
	return h.prefix.Addr()
}

// declaredAddr is an address of a declared interface.
type declaredAddr struct {
	dev    string
	prefix netip.Prefix
	item   string // the Name of its item, when known (see name)
	// self is the address of a point-to-point one, whose prefix is then
	// its peer's (what the kernel routes through dev); zero for others.
	self netip.Addr
}

// own is a's own address (see self).
func (a declaredAddr) own() netip.Addr { return hop{prefix: a.prefix, self: a.self}.own() }

// name is the Name of the address's item: made once per declared address,
// not once per route that names it.
func (a declaredAddr) name() string {
	if a.item != "" {
		return a.item
	}
	return items.AddressName(a.dev, a.prefix)
}

// newIndex indexes a validated intent: what each section's objects tell
// the others (section.addToIndex).
func newIndex(in *intent.Intent, facts Facts) *index {
	x := &index{ifaces: map[string]*intent.Interface{}, peers: map[string]*intent.Interface{},
		ports: map[string][]string{}}
	for _, s := range sections {
		if s.addToIndex != nil {
			s.addToIndex(x, in)
		}
	}
	x.addLeases(in, facts) // dhcp4.go
	return x
}

// addInterfaces indexes the declared interfaces, veth peers, ports and
// addresses.
func (x *index) addInterfaces(in *intent.Intent) {
	for i := range in.Interfaces {
		ifc := &in.Interfaces[i]
		x.ifaces[ifc.Name] = ifc
		if ifc.Master != "" {
			x.ports[ifc.Master] = append(x.ports[ifc.Master], ifc.Name)
		}
		if ifc.Veth != nil && ifc.Veth.PeerNetns == "" {
			x.peers[ifc.Veth.Peer] = ifc
		}
		for _, s := range ifc.Addresses {
			if p, peer, err := intent.ParseAddress(s); err == nil {
				d := declaredAddr{dev: ifc.Name, prefix: p, item: items.AddressName(ifc.Name, p)}
				if peer.IsValid() { // the kernel routes the peer's prefix through dev
					d.prefix, d.self = netip.PrefixFrom(peer, p.Bits()), p.Addr()
				}
				x.addrs = append(x.addrs, d)
			}
		}
	}
	for _, names := range x.ports {
		slices.Sort(names)
	}
}

// gatewayHop returns the declared subnet through which the kernel reaches
// gw for a route without a device in table, and whether there is one. Like
// the kernel's nexthop check, it looks in the route's own table first
// (its on-link routes), then in main (the declared addresses and main's
// on-link routes), and takes the longest prefix holding gw; a tie goes to
// an address, then to a physical device, then to the first device name,
// so that the choice never depends on the order of the intent.
func (x *index) gatewayHop(gw netip.Addr, table uint32) (hop, bool) {
	if table != items.TableMain {
		if h, ok := x.bestHop(gw, table, false); ok {
			return h, true
		}
	}
	return x.bestHop(gw, items.TableMain, true)
}

// bestHop returns the best subnet holding gw among table's on-link routes
// and, with addrs, the declared addresses.
func (x *index) bestHop(gw netip.Addr, table uint32, addrs bool) (hop, bool) {
	var best hop
	ok := false
	consider := func(h hop) {
		if h.prefix.Contains(gw) && h.own() != gw && (!ok || x.betterHop(h, best)) {
			best, ok = h, true
		}
	}
	if addrs {
		for _, a := range x.addrs {
			consider(hop{dev: a.dev, prefix: a.prefix, table: items.TableMain, addr: a.name(), self: a.self})
		}
	}
	for _, r := range x.onLinkRoutes {
		if r.table == table {
			consider(r)
		}
	}
	return best, ok
}

// betterHop reports whether a is a better hop than b (see gatewayHop).
func (x *index) betterHop(a, b hop) bool {
	switch {
	case a.prefix.Bits() != b.prefix.Bits():
		return a.prefix.Bits() > b.prefix.Bits()
	case (a.route == dg.ItemRef{}) != (b.route == dg.ItemRef{}):
		return a.route == dg.ItemRef{}
	case x.isPhysical(a.dev) != x.isPhysical(b.dev):
		return x.isPhysical(a.dev)
	case a.dev != b.dev:
		return a.dev < b.dev
	}
	return a.prefix.String() < b.prefix.String()
}

// isPhysical reports whether name is a declared physical interface.
func (x *index) isPhysical(name string) bool {
	ifc, ok := x.ifaces[name]
	return ok && ifc.Type == intent.LinkPhysical
}

// onLink returns the declared address whose subnet holds gw, and whether
// there is one. Where several do, it prefers one on dev, then one on a
// physical interface, then the longest prefix, then the first name, so
// that the choice does not depend on the order of the intent.
func (x *index) onLink(gw netip.Addr, dev string) (declaredAddr, bool) {
	var best declaredAddr
	ok := false
	for _, a := range x.addrs {
		if a.prefix.Contains(gw) && a.own() != gw && (!ok || x.better(a, best, dev)) {
			best, ok = a, true
		}
	}
	return best, ok
}

// better reports whether a is a better on-link address than b for a
// route out of dev (see onLink).
func (x *index) better(a, b declaredAddr, dev string) bool {
	if (a.dev == dev) != (b.dev == dev) {
		return a.dev == dev
	}
	if x.isPhysical(a.dev) != x.isPhysical(b.dev) {
		return x.isPhysical(a.dev)
	}
	if a.prefix.Bits() != b.prefix.Bits() {
		return a.prefix.Bits() > b.prefix.Bits()
	}
	return a.name() < b.name()
}

// holding returns the declared address equal to ip, and whether there is
// one.
func (x *index) holding(ip netip.Addr) (declaredAddr, bool) {
	for _, a := range x.addrs {
		if a.own() == ip {
			return a, true
		}
	}
	return declaredAddr{}, false
}
