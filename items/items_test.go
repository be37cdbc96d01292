package items

import (
	"errors"
	"net/netip"
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
)

func TestTypesAndNames(t *testing.T) {
	pfx, addr := netip.MustParsePrefix, netip.MustParseAddr
	tests := []struct {
		item dg.Item
		ref  string
	}{
		{&Link{IfName: "eth0"}, "link/eth0"},
		{&Interface{IfName: "br0", Kind: KindBridge}, "interface/br0"},
		{&Port{IfName: "lan0", Master: "br0"}, "port/lan0"},
		{&Address{Dev: "eth0", Prefix: pfx("192.0.2.10/24")}, "address/eth0/192.0.2.10/24"},
		{&Address{Dev: "eth0", Prefix: pfx("2001:db8::1/64")}, "address/eth0/2001:db8::1/64"},
		{&Route{Dst: pfx("0.0.0.0/0"), Gw: addr("192.0.2.1"), Metric: 100}, "route/main 0.0.0.0/0 metric 100"},
		{&Route{Dst: pfx("198.51.100.0/24"), Table: 100}, "route/table 100 198.51.100.0/24 metric 0"},
		{&Route{Dst: pfx("::/0"), Table: TableLocal}, "route/local ::/0 metric 1024"},
		{&Rule{Priority: 100, Family: FamilyIPv4, Table: 100}, "rule/ipv4 100: from all lookup 100"},
		{&Rule{Priority: 5, Family: FamilyIPv6, From: pfx("2001:db8::/32"), To: pfx("2001:db8:1::/48"),
			Mark: 0x10, IifName: "lan0", OifName: "wan0", Table: TableMain},
			"rule/ipv6 5: from 2001:db8::/32 to 2001:db8:1::/48 fwmark 0x10/0xffffffff iif lan0 oif wan0 lookup main"},
		{&Rule{Family: FamilyIPv4, Mask: 0xff, Table: 7}, "rule/ipv4 0: from all fwmark 0x0/0xff lookup 7"},
		{&Neighbor{Dev: "eth0", IP: addr("192.0.2.1")}, "neighbor/eth0/192.0.2.1"},
		{&IptablesChain{Family: FamilyIPv6, Table: "filter", Chain: "IN-LAN"}, "iptables-chain/ipv6/filter/IN-LAN"},
		{&Sysctl{Key: "net.ipv4.ip_forward"}, "sysctl/net.ipv4.ip_forward"},
	}
	for _, tt := range tests {
		if got := dg.Ref(tt.item).String(); got != tt.ref {
			t.Errorf("ref = %q, want %q", got, tt.ref)
		}
		if tt.item.External() != (tt.item.Type() == TypeLink) {
			t.Errorf("%s: External() = %v", tt.ref, tt.item.External())
		}
	}
}

// depStrings renders dependencies as their String, marking predicates.
func depStrings(deps []dg.Dependency) []string {
	var out []string
	for _, d := range deps {
		s := d.String()
		if d.MustSatisfy != nil {
			s += " +predicate"
		}
		if d.RecreateWhenModified {
			s += " +recreate"
		}
		out = append(out, s)
	}
	return out
}

func TestDependencies(t *testing.T) {
	pfx, addr := netip.MustParsePrefix, netip.MustParseAddr
	tests := []struct {
		name string
		item dg.Item
		want []string
	}{
		{"link", &Link{IfName: "eth0", Carrier: true}, nil},
		{"physical", &Interface{IfName: "eth0", Kind: KindPhysical}, []string{"link/eth0 (present)"}},
		{"bond", &Interface{IfName: "bond0", Kind: KindBond}, nil},
		{"bridge", &Interface{IfName: "br0", Kind: KindBridge, Attrs: &BridgeAttrs{}}, nil},
		{"veth", &Interface{IfName: "v0", Kind: KindVeth, Attrs: &VethAttrs{Peer: "v1"}}, nil},
		{"vlan", &Interface{IfName: "eth0.7", Kind: KindVLAN, Attrs: &VLANAttrs{Parent: "eth0", ID: 7}},
			[]string{"interface/eth0 (parent)"}},
		{"macvlan", &Interface{IfName: "mv0", Kind: KindMacvlan, Attrs: &MacvlanAttrs{Parent: "bond0"}},
			[]string{"interface/bond0 (parent)"}},
		{"vxlan without parent", &Interface{IfName: "vx0", Kind: KindVxlan, Attrs: &VxlanAttrs{VNI: 1}}, nil},
		{"vxlan with parent", &Interface{IfName: "vx0", Kind: KindVxlan, Attrs: &VxlanAttrs{VNI: 1, Parent: "eth1"}},
			[]string{"interface/eth1 (parent)"}},
		{"port", &Port{IfName: "lan0", Master: "br0", MasterKind: KindBridge},
			[]string{"interface/br0 (master)", "interface/lan0 (port)"}},
		{"address", &Address{Dev: "eth0", Prefix: pfx("192.0.2.10/24")}, []string{"interface/eth0"}},
		{"route blackhole", &Route{Dst: pfx("10.0.0.0/8"), Kind: RouteBlackhole}, nil},
		{"route via uplink", &Route{Dst: pfx("0.0.0.0/0"), Gw: addr("192.0.2.1"), Dev: "eth0",
			CarrierLink: "eth0", GwAddress: "eth0/192.0.2.10/24", Deps: []dg.ItemRef{{Type: TypeSysctl, Name: "x"}}},
			[]string{"interface/eth0 (device)", "link/eth0 (carrier up) +predicate",
				"address/eth0/192.0.2.10/24 (gateway on-link)", "sysctl/x"}},
		{"rule", &Rule{Family: FamilyIPv4, Table: 1, Deps: []dg.ItemRef{InterfaceRef("lan0")}}, []string{"interface/lan0"}},
		{"neighbor", &Neighbor{Dev: "eth0", IP: addr("192.0.2.1")}, []string{"interface/eth0"}},
		{"chain", &IptablesChain{Family: FamilyIPv4, Table: "nat", Chain: "C"}, nil},
		{"global sysctl", &Sysctl{Key: "net.ipv4.ip_forward"}, nil},
		{"per-interface sysctl", &Sysctl{Key: "net.ipv6.conf.eth0/100.accept_ra"},
			[]string{"interface/eth0.100 (per-interface key)"}},
	}
	for _, tt := range tests {
		if got := depStrings(tt.item.Dependencies()); !slices.Equal(got, tt.want) {
			t.Errorf("%s: dependencies %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestCarrierPredicate(t *testing.T) {
	route := &Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Dev: "eth0", CarrierLink: "eth0"}
	i := slices.IndexFunc(route.Dependencies(), func(d dg.Dependency) bool { return d.RequiredItem == LinkRef("eth0") })
	if i < 0 {
		t.Fatal("no dependency on link/eth0")
	}
	pred := route.Dependencies()[i].MustSatisfy
	if !pred(&Link{IfName: "eth0", Carrier: true}) {
		t.Error("predicate false for a link with carrier")
	}
	if pred(&Link{IfName: "eth0", AdminUp: true, OperUp: true}) {
		t.Error("predicate true for a link without carrier")
	}
	if pred((*Link)(nil)) || pred(&Interface{IfName: "eth0"}) {
		t.Error("predicate true for something that is not a link")
	}
}

func TestSysctlInterface(t *testing.T) {
	tests := []struct {
		key, ifname string
	}{
		{"net.ipv4.conf.eth0.rp_filter", "eth0"},
		{"net.ipv6.conf.br0.disable_ipv6", "br0"},
		{"net.ipv4.neigh.lan0.base_reachable_time_ms", "lan0"},
		{"net.ipv6.neigh.lan0.retrans_time_ms", "lan0"},
		{"net.ipv4.conf.bond0/42.forwarding", "bond0.42"},
		{"net.ipv4.conf.all.forwarding", ""},
		{"net.ipv6.conf.default.accept_ra", ""},
		{"net.ipv4.conf.lo.rp_filter", ""},
		{"net.ipv4.conf.eth0", ""},
		{"net.ipv4.ip_forward", ""},
		{"net.core.somaxconn", ""},
	}
	for _, tt := range tests {
		got, ok := SysctlInterface(tt.key)
		if got != tt.ifname || ok != (tt.ifname != "") {
			t.Errorf("SysctlInterface(%q) = %q, %v; want %q", tt.key, got, ok, tt.ifname)
		}
	}
}

func TestValidate(t *testing.T) {
	pfx, addr := netip.MustParsePrefix, netip.MustParseAddr
	type validator interface{ Validate() error }
	valid := []validator{
		&Interface{IfName: "eth0", Kind: KindPhysical, MTU: 9000},
		&Interface{IfName: "bond0", Kind: KindBond},
		&Interface{IfName: "eth0.7", Kind: KindVLAN, Attrs: &VLANAttrs{Parent: "eth0", ID: 7}},
		&Interface{IfName: "vx0", Kind: KindVxlan, Attrs: &VxlanAttrs{VNI: 1, Group: addr("ff05::1"), Parent: "eth0"}},
		&Port{IfName: "lan0", Master: "br0", MasterKind: KindBridge, Cost: 4},
		&Address{Dev: "eth0", Prefix: pfx("192.0.2.10/24"), Label: "eth0:a"},
		&Route{Dst: pfx("0.0.0.0/0"), Gw: addr("192.0.2.1")},
		&Route{Dst: pfx("10.0.0.0/8"), Kind: RouteUnreachable},
		&Route{Dst: pfx("::/0"), Gw: addr("fe80::1"), Dev: "eth0"},
		&Rule{Priority: 10, Family: FamilyIPv6, From: pfx("2001:db8::/32"), Table: 100},
		&Neighbor{Dev: "eth0", IP: addr("192.0.2.1"), MAC: []byte{2, 0, 0, 0, 0, 1}},
		&IptablesChain{Family: FamilyIPv4, Table: "nat", Chain: "NAT-OUT", Rules: [][]string{{"-j", "MASQUERADE"}}},
		&Sysctl{Key: "net.ipv4.conf.eth0/7.forwarding", Value: "1"},
	}
	for _, v := range valid {
		if err := v.Validate(); err != nil {
			t.Errorf("%v: %v", v, err)
		}
	}
	invalid := []validator{
		&Interface{IfName: "a-name-that-is-too-long", Kind: KindPhysical},
		&Interface{IfName: "eth0", Kind: "tun"},
		&Interface{IfName: "eth0", Kind: KindPhysical, Attrs: &BondAttrs{}},
		&Interface{IfName: "eth0.7", Kind: KindVLAN},
		&Interface{IfName: "eth0.7", Kind: KindVLAN, Attrs: &VLANAttrs{Parent: "eth0", ID: 4095}},
		&Interface{IfName: "bond0", Kind: KindBond, Attrs: &BondAttrs{Mode: "fastest"}},
		&Interface{IfName: "br0", Kind: KindBridge, Attrs: &BridgeAttrs{ForwardDelay: 15}},
		&Interface{IfName: "mv0", Kind: KindMacvlan, Attrs: &MacvlanAttrs{Parent: "mv0"}},
		&Interface{IfName: "vx0", Kind: KindVxlan, Attrs: &VxlanAttrs{VNI: 1 << 24}},
		&Interface{IfName: "vx0", Kind: KindVxlan, Attrs: &VxlanAttrs{Local: addr("192.0.2.1"), Remote: addr("2001:db8::1")}},
		&Interface{IfName: "vx0", Kind: KindVxlan, Attrs: &VxlanAttrs{Group: addr("192.0.2.1")}},
		&Port{IfName: "lan0", Master: "bond0", MasterKind: KindBond, Cost: 4},
		&Port{IfName: "lan0", Master: "vx0", MasterKind: KindVxlan},
		&Address{Dev: "eth0", Prefix: pfx("2001:db8::1/64"), Label: "eth0:a"},
		&Route{Dst: pfx("10.0.0.1/8"), Dev: "eth0"},
		&Route{Dst: pfx("10.0.0.0/8")},
		&Route{Dst: pfx("10.0.0.0/8"), Gw: addr("2001:db8::1")},
		&Route{Dst: pfx("10.0.0.0/8"), Dev: "eth0", Kind: RouteBlackhole},
		&Route{Dst: pfx("::/0"), Gw: addr("fe80::1")},
		&Rule{Priority: 10, Family: FamilyIPv4, From: pfx("2001:db8::/32"), Table: 100},
		&Rule{Priority: 10, Family: FamilyIPv4},
		&Neighbor{Dev: "eth0", IP: addr("192.0.2.1")},
		&IptablesChain{Family: FamilyIPv4, Table: "nat", Chain: "-bad"},
		&IptablesChain{Family: FamilyIPv4, Table: "broute", Chain: "C"},
		&Sysctl{Key: "kernel.panic", Value: "1"},
	}
	for _, v := range invalid {
		if err := v.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%v: Validate() = %v, want ErrInvalid", v, err)
		}
	}
}
