package render

import (
	"net/netip"
	"slices"

	"github.com/netagent/netagent/agent/intent"
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
	// ports maps a master's name to the names of its declared ports, in
	// name order.
	ports map[string][]string
}

// declaredAddr is an address of a declared interface.
type declaredAddr struct {
	dev    string
	prefix netip.Prefix
}

// name is the Name of the address's item.
func (a declaredAddr) name() string { return items.AddressName(a.dev, a.prefix) }

// newIndex indexes a validated intent.
func newIndex(in *intent.Intent) *index {
	x := &index{ifaces: map[string]*intent.Interface{}, peers: map[string]*intent.Interface{},
		ports: map[string][]string{}}
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
			if p, err := netip.ParsePrefix(s); err == nil {
				x.addrs = append(x.addrs, declaredAddr{dev: ifc.Name, prefix: p})
			}
		}
	}
	for _, names := range x.ports {
		slices.Sort(names)
	}
	return x
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
		if a.prefix.Contains(gw) && a.prefix.Addr() != gw && (!ok || x.better(a, best, dev)) {
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
		if a.prefix.Addr() == ip {
			return a, true
		}
	}
	return declaredAddr{}, false
}
