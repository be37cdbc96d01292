package render

import (
	"net"
	"net/netip"
	"time"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// centisecond is the unit of a bridge's forward delay in the intent (and in
// netlink); items keep it as a time.Duration.
const centisecond = 10 * time.Millisecond

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
	switch ifc.Type {
	case intent.LinkBond:
		it.Bond = bondAttrs(ifc.Bond)
	case intent.LinkVLAN:
		it.VLAN = &items.VLANAttrs{Parent: ifc.VLAN.Parent, ID: uint16(ifc.VLAN.ID), Protocol: string(ifc.VLAN.Protocol)}
	case intent.LinkBridge:
		it.Bridge = bridgeAttrs(ifc.Bridge)
	case intent.LinkVeth:
		it.Veth = &items.VethAttrs{Peer: ifc.Veth.Peer, PeerNetns: ifc.Veth.PeerNetns}
	case intent.LinkMacvlan:
		it.Macvlan = &items.MacvlanAttrs{Parent: ifc.Macvlan.Parent, Mode: string(ifc.Macvlan.Mode)}
	case intent.LinkVXLAN:
		it.Vxlan = vxlanAttrs(ifc.VXLAN)
	}
	return it
}

// bondAttrs converts a bond section; nil (all defaults) stays nil. The
// intent's names are the kernel's.
func bondAttrs(b *intent.Bond) *items.BondAttrs {
	if b == nil {
		return nil
	}
	return &items.BondAttrs{
		Mode:           string(b.Mode),
		Miimon:         b.MIIMon,
		LacpRate:       string(b.LACPRate),
		XmitHashPolicy: string(b.XmitHashPolicy),
		MinLinks:       b.MinLinks,
		Primary:        b.Primary,
	}
}

// bridgeAttrs converts a bridge section; nil (all defaults) stays nil. The
// forward delay goes from centiseconds to a duration.
func bridgeAttrs(b *intent.Bridge) *items.BridgeAttrs {
	if b == nil {
		return nil
	}
	return &items.BridgeAttrs{
		STP:           b.STP,
		VLANFiltering: b.VLANFiltering,
		ForwardDelay:  time.Duration(b.ForwardDelay) * centisecond,
	}
}

// vxlanAttrs converts a VXLAN section. The port and learning are always
// explicit: the intent's default port is IANA's 4789 where the kernel's is
// 8472, and learning defaults to on.
func vxlanAttrs(v *intent.VXLAN) *items.VxlanAttrs {
	return &items.VxlanAttrs{
		VNI:      uint32(v.VNI),
		Local:    optAddr(v.Local),
		Remote:   optAddr(v.Remote),
		Group:    optAddr(v.Group),
		Port:     uint16(v.EffectivePort()),
		Parent:   v.Parent,
		Learning: v.EffectiveLearning(),
	}
}

// portItem renders an interface's membership of its master.
func (b *builder) portItem(ifc *intent.Interface) *items.Port {
	kind := items.KindBridge
	if m, ok := b.idx.ifaces[ifc.Master]; ok && m.Type == intent.LinkBond {
		kind = items.KindBond
	}
	return &items.Port{IfName: ifc.Name, Master: ifc.Master, MasterKind: kind}
}

// optAddr parses an optional address ("" gives the zero Addr).
func optAddr(s string) netip.Addr {
	a, _ := netip.ParseAddr(s) // Validate checked it
	return a
}
