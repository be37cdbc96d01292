package render

import (
	"net"
	"net/netip"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// interfaces renders every interface: its interface item, its port (when
// it has a master) and its addresses, all in the interface's file.
func (b *builder) interfaces() {
	for i := range b.in.Interfaces {
		ifc := &b.in.Interfaces[i]
		at := b.in.Locate(ifc.Origin, "interfaces", i)
		b.object(ifc.Drift, ifc.Origin)
		b.put(interfaceItem(ifc), at)
		if ifc.Master != "" {
			b.put(b.portItem(ifc), field(at, "master"))
		}
		b.bridgeMembership(ifc, at)
		b.ethtool(ifc, at) // ethtool.go
		for j, s := range ifc.Addresses {
			p, peer, _ := intent.ParseAddress(s) // Validate checked it
			b.put(&items.Address{Dev: ifc.Name, Prefix: p, Peer: peer, Deps: b.vrfPort(ifc.Name)}, element(field(at, "addresses"), j))
		}
		b.ipv6(ifc, at) // ipv6.go
	}
}

// interfaceItem converts an interface, and the section of its type.
func interfaceItem(ifc *intent.Interface) *items.Interface {
	it := &items.Interface{
		IfName:  ifc.Name,
		Kind:    items.InterfaceKind(ifc.Type),
		MTU:     ifc.MTU,
		AdminUp: ifc.IsUp(),
		Alias:   ifc.Alias,
	}
	if ifc.MAC != "" {
		it.MAC, _ = net.ParseMAC(ifc.MAC) // Validate checked it
	}
	if kind, ok := linkKinds[ifc.Type]; ok {
		it.Attrs = kind.toItem(ifc)
	}
	it.Match = nicMatch(ifc.Match)
	return it
}

// nicMatch converts a physical interface's match (Validate checked it).
func nicMatch(m *intent.Match) *items.NICMatch {
	if m == nil {
		return nil
	}
	out := &items.NICMatch{Driver: m.Driver, Path: m.Path, Name: m.Name}
	out.PermanentMAC, _ = net.ParseMAC(m.PermanentMAC)
	out.MAC, _ = net.ParseMAC(m.MAC)
	return out
}

// portItem renders an interface's membership of its master (a bond, a
// bridge or a vrf: Validate checked it).
func (b *builder) portItem(ifc *intent.Interface) *items.Port {
	kind := items.KindBridge
	if m, ok := b.idx.ifaces[ifc.Master]; ok {
		kind = items.InterfaceKind(m.Type)
	}
	p := &items.Port{IfName: ifc.Name, Master: ifc.Master, MasterKind: kind}
	bridgePortSettings(p, ifc.BridgePort)
	return p
}

// vrfPort returns the Port of dev when dev is a port of a vrf, for the
// addresses, routes and neighbours on dev to wait for: enslaving dev to a
// vrf (and moving it to another) makes the kernel cycle it, which flushes
// its routes, neighbours and IPv6 addresses (cycle_netdev, and addrconf on
// NETDEV_CHANGEUPPER to an L3 master).
func (b *builder) vrfPort(dev string) []dg.ItemRef {
	ifc, ok := b.idx.ifaces[dev]
	if !ok || ifc.Master == "" {
		return nil
	}
	if m, ok := b.idx.ifaces[ifc.Master]; !ok || m.Type != intent.LinkVRF {
		return nil
	}
	return []dg.ItemRef{{Type: items.TypePort, Name: dev}}
}

// optAddr parses an optional address ("" gives the zero Addr, without
// the error ParseAddr would make).
func optAddr(s string) netip.Addr {
	if s == "" {
		return netip.Addr{}
	}
	a, _ := netip.ParseAddr(s) // Validate checked it
	return a
}
