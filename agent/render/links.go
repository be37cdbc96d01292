package render

import (
	"net"
	"net/netip"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// interfaces renders every interface: its interface item, its port (when
// it has a master) and its addresses, all in the interface's file.
func (b *builder) interfaces() {
	for i := range b.in.Interfaces {
		ifc := &b.in.Interfaces[i]
		at := locate(ifc.Origin, "interfaces", i)
		b.put(interfaceItem(ifc), at)
		if ifc.Master != "" {
			b.put(b.portItem(ifc), field(at, "master"))
		}
		b.bridgeMembership(ifc, at)
		for j, s := range ifc.Addresses {
			p, _ := netip.ParsePrefix(s) // Validate checked it
			b.put(&items.Address{Dev: ifc.Name, Prefix: p}, element(field(at, "addresses"), j))
		}
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
	return it
}

// portItem renders an interface's membership of its master.
func (b *builder) portItem(ifc *intent.Interface) *items.Port {
	kind := items.KindBridge
	if m, ok := b.idx.ifaces[ifc.Master]; ok && m.Type == intent.LinkBond {
		kind = items.KindBond
	}
	p := &items.Port{IfName: ifc.Name, Master: ifc.Master, MasterKind: kind}
	bridgePortSettings(p, ifc.BridgePort)
	return p
}

// optAddr parses an optional address ("" gives the zero Addr).
func optAddr(s string) netip.Addr {
	a, _ := netip.ParseAddr(s) // Validate checked it
	return a
}
