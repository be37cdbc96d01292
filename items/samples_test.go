package items

import (
	"net"
	"net/netip"
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

// samples returns constructors of fully populated items: every field of the
// item and of its set attributes is non-zero (equal_test checks it), so that
// a mutation of any field can be told apart. Each call builds fresh values
// that share no memory with any other.
func samples() map[string]func() dg.Item {
	mac := func() net.HardwareAddr { return net.HardwareAddr{0x02, 0, 0, 0, 0, 1} }
	iface := func(kind InterfaceKind) *Interface {
		return &Interface{IfName: "if0", Kind: kind, MTU: 1500, AdminUp: true, MAC: mac(), Alias: "uplink"}
	}
	return map[string]func() dg.Item{
		"link": func() dg.Item {
			return &Link{IfName: "eth0", Index: 2, Kind: "veth", MAC: mac(), AdminUp: true, OperUp: true, Carrier: true}
		},
		"interface/physical": func() dg.Item { return iface(KindPhysical) },
		"interface/bond": func() dg.Item {
			i := iface(KindBond)
			i.Attrs = &BondAttrs{Mode: "802.3ad", Miimon: 100, LacpRate: "fast", XmitHashPolicy: "layer3+4", MinLinks: 1, Primary: "eth0"}
			return i
		},
		"interface/vlan": func() dg.Item {
			i := iface(KindVLAN)
			i.Attrs = &VLANAttrs{Parent: "eth0", ID: 100, Protocol: "802.1ad"}
			return i
		},
		"interface/bridge": func() dg.Item {
			i := iface(KindBridge)
			i.Attrs = &BridgeAttrs{STP: true, VLANFiltering: true, ForwardDelay: 4 * time.Second}
			return i
		},
		"interface/veth": func() dg.Item {
			i := iface(KindVeth)
			i.Attrs = &VethAttrs{Peer: "if1", PeerNetns: "blue"}
			return i
		},
		"interface/macvlan": func() dg.Item {
			i := iface(KindMacvlan)
			i.Attrs = &MacvlanAttrs{Parent: "eth0", Mode: "bridge"}
			return i
		},
		"interface/vxlan": func() dg.Item {
			i := iface(KindVxlan)
			i.Attrs = &VxlanAttrs{VNI: 42, Local: netip.MustParseAddr("192.0.2.1"),
				Remote: netip.MustParseAddr("192.0.2.2"), Group: netip.MustParseAddr("239.1.1.1"),
				Port: 4789, Parent: "eth0", Learning: true}
			return i
		},
		"port": func() dg.Item {
			return &Port{IfName: "lan0", Master: "br0", MasterKind: KindBridge, Cost: 100}
		},
		"address": func() dg.Item {
			return &Address{Dev: "eth0", Prefix: netip.MustParsePrefix("192.0.2.10/24"), Peer: netip.MustParseAddr("192.0.2.20"), Label: "eth0:1", Scope: ScopeLink,
				Deps: []dg.ItemRef{{Type: TypePort, Name: "eth0"}}, ValidUntil: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC),
				PreferredUntil: time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC), RouteMetric: 100}
		},
		"route": func() dg.Item {
			return &Route{Dst: netip.MustParsePrefix("198.51.100.0/24"), Gw: netip.MustParseAddr("192.0.2.1"),
				Dev: "eth0", Table: 100, Metric: 10, Scope: ScopeLink, Src: netip.MustParseAddr("192.0.2.10"),
				Kind: RouteBlackhole, OnLink: true, MTU: 1400, Pref: RoutePrefHigh,
				Nexthops:    []Nexthop{{Gw: netip.MustParseAddr("192.0.2.2"), Dev: "eth1", Weight: 2, OnLink: true}},
				CarrierLink: "eth0", GwAddress: "eth0/192.0.2.10/24",
				Deps: []dg.ItemRef{{Type: TypeAddress, Name: "eth0/192.0.2.10/24"}}}
		},
		"rule": func() dg.Item {
			return &Rule{Priority: 100, Family: FamilyIPv4, From: netip.MustParsePrefix("10.0.0.0/8"),
				To: netip.MustParsePrefix("10.1.0.0/16"), Mark: 1, Mask: 0xff, IifName: "lan0",
				OifName: "eth0", IPProto: 6, SPort: PortRange{1000, 2000}, DPort: PortRange{80, 80},
				UIDs: &UIDRange{1000, 1999}, Invert: true, Action: RuleGoto, Table: 100, Goto: 200,
				SuppressPrefixlen: new(uint8(1)), Deps: []dg.ItemRef{InterfaceRef("lan0")}}
		},
		"foreign": func() dg.Item {
			return &Foreign{Kind: TypeRoute, Desc: "main 10.0.0.0/8 metric 0 tos 4 proto static", Owned: true,
				Holds: dg.ItemRef{Type: TypeRoute, Name: "main 10.0.0.0/8 metric 0"}, Why: "a tos"}
		},
		"neighbor": func() dg.Item {
			return &Neighbor{Dev: "br0", IP: netip.MustParseAddr("192.0.2.1"), MAC: mac(),
				Deps: []dg.ItemRef{{Type: TypePort, Name: "eth0"}}}
		},
		"iptables-chain": func() dg.Item {
			return &IptablesChain{Family: FamilyIPv4, Table: "nat", Chain: "NAT-OUT", JumpFrom: "POSTROUTING",
				Position: 3, BlockStart: 2, Rules: [][]string{{"-o", "eth0", "-j", "MASQUERADE"}},
				Deps: []dg.ItemRef{InterfaceRef("eth0")}}
		},
		"sysctl": func() dg.Item {
			return &Sysctl{Key: "net.ipv4.ip_forward", Value: "1", Deps: []dg.ItemRef{{Type: TypeSysctl, Name: "net.ipv4.conf.eth0.forwarding"}}}
		},
	}
}
