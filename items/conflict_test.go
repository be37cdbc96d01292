package items_test

import (
	"net/netip"
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// Two items conflict when the kernel keys them alike: an IPv6 address under
// two prefix lengths does, and so do two VLANs with one parent and ID, two
// VXLANs with one VNI and port, or a veth's peer and another interface of
// that name; IPv4 addresses and routes with other
// metrics do not (their names are their kernel keys).
func TestConflictKeys(t *testing.T) {
	addr := func(dev, p string) dg.Item {
		return &items.Address{Dev: dev, Prefix: netip.MustParsePrefix(p)}
	}
	route := func(metric uint32) dg.Item {
		return &items.Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gw: netip.MustParseAddr("192.0.2.1"), Metric: metric}
	}
	vlan := func(name, parent string, id uint16) dg.Item {
		return &items.Interface{IfName: name, Kind: items.KindVLAN, Attrs: &items.VLANAttrs{Parent: parent, ID: id}}
	}
	vxlan := func(name string, vni uint32, port uint16) dg.Item {
		return &items.Interface{IfName: name, Kind: items.KindVxlan, Attrs: &items.VxlanAttrs{VNI: vni, Port: port}}
	}
	veth := func(name, peer string) dg.Item {
		return &items.Interface{IfName: name, Kind: items.KindVeth, Attrs: &items.VethAttrs{Peer: peer}}
	}
	for _, c := range []struct {
		a, b     dg.Item
		conflict bool
	}{
		{addr("eth0", "2001:db8::1/64"), addr("eth0", "2001:db8::1/56"), true},
		{addr("eth0", "2001:db8::1/64"), addr("eth1", "2001:db8::1/64"), false},
		{addr("eth0", "2001:db8::1/64"), addr("eth0", "2001:db8::2/64"), false},
		{addr("eth0", "192.0.2.10/24"), addr("eth0", "192.0.2.10/25"), false},
		{addr("eth0", "192.0.2.10/24"), addr("eth0", "192.0.2.11/24"), false},
		{route(100), route(200), false},
		{vlan("eth0.100", "eth0", 100), vlan("uplink.100", "eth0", 100), true},
		{vlan("eth0.100", "eth0", 100), vlan("eth0.200", "eth0", 200), false},
		{vlan("eth0.100", "eth0", 100), vlan("eth1.100", "eth1", 100), false},
		{vxlan("vx100", 100, 0), vxlan("vxlan100", 100, 8472), true},
		{vxlan("vx100", 100, 4789), vxlan("vxlan100", 100, 8472), false},
		{vxlan("vx100", 100, 4789), vxlan("vx101", 101, 4789), false},
		{veth("lan0", "lan0-peer"), veth("lan1", "lan0-peer"), true},
		{veth("lan0", "lan0-peer"), &items.Interface{IfName: "lan0-peer", Kind: items.KindBridge}, true},
		{veth("lan0", "lan0-peer"), veth("lan1", "lan1-peer"), false},
		{&items.Sysctl{Key: "net.ipv4.ip_forward"}, &items.Sysctl{Key: "net.ipv4.conf.all.forwarding"}, true},
		{&items.Sysctl{Key: "net.ipv4.ip_forward"}, &items.Sysctl{Key: "net.ipv4.conf.default.forwarding"}, false},
		{&items.Sysctl{Key: "net.ipv6.conf.all.forwarding"}, &items.Sysctl{Key: "net.ipv4.conf.all.forwarding"}, false},
	} {
		ka, kb := dg.ConflictKeysOf(c.a), dg.ConflictKeysOf(c.b)
		got := slices.ContainsFunc(ka, func(k string) bool { return slices.Contains(kb, k) })
		if got != c.conflict {
			t.Errorf("%s and %s: conflict %v (keys %q, %q), want %v", c.a, c.b, got, ka, kb, c.conflict)
		}
	}
}
