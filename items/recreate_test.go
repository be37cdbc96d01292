package items

import (
	"net/netip"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
)

func TestInterfaceNeedsRecreate(t *testing.T) {
	addr := netip.MustParseAddr
	bond := func(a BondAttrs) *Interface { return &Interface{IfName: "bond0", Kind: KindBond, Attrs: &a} }
	vlan := func(a VLANAttrs) *Interface { return &Interface{IfName: "v", Kind: KindVLAN, Attrs: &a} }
	veth := func(a VethAttrs) *Interface { return &Interface{IfName: "v0", Kind: KindVeth, Attrs: &a} }
	macvlan := func(a MacvlanAttrs) *Interface { return &Interface{IfName: "mv0", Kind: KindMacvlan, Attrs: &a} }
	ipvlan := func(a IpvlanAttrs) *Interface { return &Interface{IfName: "iv0", Kind: KindIpvlan, Attrs: &a} }
	vxlan := func(a VxlanAttrs) *Interface { return &Interface{IfName: "vx0", Kind: KindVxlan, Attrs: &a} }
	vx := VxlanAttrs{VNI: 42, Local: addr("192.0.2.1"), Remote: addr("192.0.2.2"), Port: 4789, Parent: "eth0"}
	with := func(f func(*VxlanAttrs)) VxlanAttrs { a := vx; f(&a); return a }

	tests := []struct {
		name     string
		old, new *Interface
		want     bool
	}{
		{"kind", &Interface{IfName: "x", Kind: KindBond}, &Interface{IfName: "x", Kind: KindBridge}, true},
		{"physical mtu, up, mac, alias",
			&Interface{IfName: "eth0", Kind: KindPhysical, MTU: 1500},
			&Interface{IfName: "eth0", Kind: KindPhysical, MTU: 9000, AdminUp: true, MAC: []byte{2, 0, 0, 0, 0, 1}, Alias: "a"}, false},
		{"bond mode", bond(BondAttrs{Mode: "active-backup"}), bond(BondAttrs{Mode: "802.3ad"}), true},
		{"bond default mode spelled out", &Interface{IfName: "bond0", Kind: KindBond}, bond(BondAttrs{Mode: "balance-rr"}), false},
		{"bond other settings", bond(BondAttrs{Mode: "802.3ad", Miimon: 100, LacpRate: "slow"}),
			bond(BondAttrs{Mode: "802.3ad", Miimon: 200, LacpRate: "fast", XmitHashPolicy: "layer3+4", MinLinks: 2, Primary: "eth1"}), false},
		{"vlan id", vlan(VLANAttrs{Parent: "eth0", ID: 7}), vlan(VLANAttrs{Parent: "eth0", ID: 8}), true},
		{"vlan parent", vlan(VLANAttrs{Parent: "eth0", ID: 7}), vlan(VLANAttrs{Parent: "eth1", ID: 7}), true},
		{"vlan protocol", vlan(VLANAttrs{Parent: "eth0", ID: 7}), vlan(VLANAttrs{Parent: "eth0", ID: 7, Protocol: "802.1ad"}), true},
		{"vlan protocol default spelled out", vlan(VLANAttrs{Parent: "eth0", ID: 7}), vlan(VLANAttrs{Parent: "eth0", ID: 7, Protocol: "802.1q"}), false},
		{"bridge settings", &Interface{IfName: "br0", Kind: KindBridge},
			&Interface{IfName: "br0", Kind: KindBridge, Attrs: &BridgeAttrs{STP: true, VLANFiltering: true, ForwardDelay: 4e9}}, false},
		{"veth peer", veth(VethAttrs{Peer: "v1"}), veth(VethAttrs{Peer: "v2"}), true},
		{"veth peer netns", veth(VethAttrs{Peer: "v1"}), veth(VethAttrs{Peer: "v1", PeerNetns: "blue"}), true},
		{"veth mtu", veth(VethAttrs{Peer: "v1"}), &Interface{IfName: "v0", Kind: KindVeth, MTU: 9000, Attrs: &VethAttrs{Peer: "v1"}}, false},
		{"macvlan parent", macvlan(MacvlanAttrs{Parent: "eth0"}), macvlan(MacvlanAttrs{Parent: "eth1"}), true},
		{"macvlan mode", macvlan(MacvlanAttrs{Parent: "eth0", Mode: "vepa"}), macvlan(MacvlanAttrs{Parent: "eth0", Mode: "bridge"}), false},
		{"macvlan to passthru", macvlan(MacvlanAttrs{Parent: "eth0", Mode: "bridge"}), macvlan(MacvlanAttrs{Parent: "eth0", Mode: "passthru"}), true},
		{"ipvlan parent", ipvlan(IpvlanAttrs{Parent: "eth0"}), ipvlan(IpvlanAttrs{Parent: "eth1"}), true},
		{"ipvlan mode and flag", ipvlan(IpvlanAttrs{Parent: "eth0", Mode: "l2"}), ipvlan(IpvlanAttrs{Parent: "eth0", Mode: "l3s", Flag: "vepa"}), false},
		{"ipvlan to the defaults", ipvlan(IpvlanAttrs{Parent: "eth0", Mode: "l2", Flag: "private"}), ipvlan(IpvlanAttrs{Parent: "eth0"}), false},
		{"macvlan from passthru", macvlan(MacvlanAttrs{Parent: "eth0", Mode: "passthru"}), macvlan(MacvlanAttrs{Parent: "eth0"}), true},
		{"vxlan same", vxlan(vx), vxlan(vx), false},
		{"vxlan vni", vxlan(vx), vxlan(with(func(a *VxlanAttrs) { a.VNI = 43 })), true},
		{"vxlan port", vxlan(vx), vxlan(with(func(a *VxlanAttrs) { a.Port = 8472 })), true},
		{"vxlan default port spelled out", vxlan(with(func(a *VxlanAttrs) { a.Port = 0 })),
			vxlan(with(func(a *VxlanAttrs) { a.Port = 8472 })), false},
		{"vxlan parent", vxlan(vx), vxlan(with(func(a *VxlanAttrs) { a.Parent = "eth1" })), true},
		{"vxlan group", vxlan(vx), vxlan(with(func(a *VxlanAttrs) { a.Remote = netip.Addr{}; a.Group = addr("239.1.1.1") })), true},
		{"vxlan local, same family", vxlan(vx), vxlan(with(func(a *VxlanAttrs) { a.Local = addr("192.0.2.9") })), false},
		{"vxlan remote, same family", vxlan(vx), vxlan(with(func(a *VxlanAttrs) { a.Remote = addr("192.0.2.9") })), false},
		{"vxlan family", vxlan(vx), vxlan(with(func(a *VxlanAttrs) {
			a.Local, a.Remote = addr("2001:db8::1"), addr("2001:db8::2")
		})), true},
		{"vxlan learning", vxlan(vx), vxlan(with(func(a *VxlanAttrs) { a.Learning = true })), false},
	}
	for _, tt := range tests {
		if got := InterfaceNeedsRecreate(tt.old, tt.new); got != tt.want {
			t.Errorf("%s: InterfaceNeedsRecreate = %v, want %v", tt.name, got, tt.want)
		}
		if got := NeedsRecreate(tt.old, tt.new); got != tt.want {
			t.Errorf("%s: NeedsRecreate = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestNeedsRecreateOtherTypes(t *testing.T) {
	pfx, addr := netip.MustParsePrefix, netip.MustParseAddr
	p := pfx("192.0.2.10/24")
	tests := []struct {
		name     string
		old, new dg.Item
		want     bool
	}{
		{"address label", &Address{Dev: "eth0", Prefix: p}, &Address{Dev: "eth0", Prefix: p, Label: "eth0:a"}, true},
		{"address scope", &Address{Dev: "eth0", Prefix: p}, &Address{Dev: "eth0", Prefix: p, Scope: ScopeLink}, true},
		{"address peer", &Address{Dev: "eth0", Prefix: p}, &Address{Dev: "eth0", Prefix: p, Peer: addr("192.0.2.20")}, true},
		{"address same", &Address{Dev: "eth0", Prefix: p}, &Address{Dev: "eth0", Prefix: p}, false},
		{"port master", &Port{IfName: "eth1", Master: "bond0", MasterKind: KindBond},
			&Port{IfName: "eth1", Master: "br0", MasterKind: KindBridge}, false},
		{"route gw, dev, src, scope, type",
			&Route{Dst: pfx("10.0.0.0/8"), Gw: addr("192.0.2.1"), Dev: "eth0"},
			&Route{Dst: pfx("10.0.0.0/8"), Src: addr("192.0.2.10"), Scope: ScopeLink, Kind: RouteBlackhole}, false},
		{"neighbor mac", &Neighbor{Dev: "eth0", IP: addr("192.0.2.1"), MAC: []byte{2, 0, 0, 0, 0, 1}},
			&Neighbor{Dev: "eth0", IP: addr("192.0.2.1"), MAC: []byte{2, 0, 0, 0, 0, 2}}, false},
		{"chain rules and jump", &IptablesChain{Family: FamilyIPv4, Table: "nat", Chain: "C"},
			&IptablesChain{Family: FamilyIPv4, Table: "nat", Chain: "C", JumpFrom: "POSTROUTING", Rules: [][]string{{"-j", "ACCEPT"}}}, false},
		{"rule deps", &Rule{Family: FamilyIPv4, Table: 1}, &Rule{Family: FamilyIPv4, Table: 1, Deps: []dg.ItemRef{InterfaceRef("x")}}, false},
		{"sysctl value", &Sysctl{Key: "net.ipv4.ip_forward", Value: "0"}, &Sysctl{Key: "net.ipv4.ip_forward", Value: "1"}, false},
		{"mixed types", &Address{Dev: "eth0", Prefix: p}, &Sysctl{Key: "k"}, false},
		{"nil", (*Interface)(nil), &Interface{IfName: "x"}, false},
	}
	for _, tt := range tests {
		if got := NeedsRecreate(tt.old, tt.new); got != tt.want {
			t.Errorf("%s: NeedsRecreate = %v, want %v", tt.name, got, tt.want)
		}
	}
}
