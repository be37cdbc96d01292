package render

import (
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// needs lists the references an item depends on, in order.
func needs(t *testing.T, g *dg.Graph, ref dg.ItemRef) []string {
	t.Helper()
	if !g.Contains(ref) {
		t.Fatalf("%v not rendered", ref)
	}
	var out []string
	for _, d := range g.Dependencies(ref) {
		out = append(out, d.RequiredItem.String())
	}
	return out
}

// Issue 7: a neighbour on a bridge (or bond) was created before the
// bridge's ports; enslaving a port changes the master's MAC and the kernel
// flushes its neighbours. The neighbour now depends on the ports of its
// device declared in the intent, so it is created after them, in one pass;
// a master whose MAC the intent sets keeps it, so its neighbours need no
// ports.
func TestRenderNeighborAfterMasterPorts(t *testing.T) {
	g := mustRender(t, parse(t, `{"version": 1,
		"interfaces": [
			{"name": "br-lan", "type": "bridge", "addresses": ["192.168.50.1/24"]},
			{"name": "lan1", "type": "veth", "veth": {"peer": "lan1-peer"}, "master": "br-lan"},
			{"name": "lan0", "type": "veth", "veth": {"peer": "lan0-peer"}, "master": "br-lan"},
			{"name": "br-mac", "type": "bridge", "mac": "02:00:00:00:00:aa"},
			{"name": "mac0", "type": "veth", "veth": {"peer": "mac0-peer"}, "master": "br-mac"},
			{"name": "eth0", "type": "physical"},
			{"name": "bond0", "type": "bond", "bond": {"mode": "active-backup"}},
			{"name": "eth2", "type": "physical", "master": "bond0"},
			{"name": "eth1", "type": "physical", "master": "bond0"},
			{"name": "bond0.7", "type": "vlan", "vlan": {"parent": "bond0", "id": 7}},
			{"name": "br-lan.9", "type": "vlan", "vlan": {"parent": "br-lan", "id": 9}, "mac": "02:00:00:00:00:bb"}
		],
		"neighbors": [
			{"dev": "br-lan", "ip": "192.168.50.20", "mac": "02:00:00:00:00:20"},
			{"dev": "br-mac", "ip": "192.168.60.20", "mac": "02:00:00:00:00:21"},
			{"dev": "eth0", "ip": "192.0.2.20", "mac": "02:00:00:00:00:22"},
			{"dev": "bond0", "ip": "192.0.2.21", "mac": "02:00:00:00:00:23"},
			{"dev": "bond0.7", "ip": "192.0.2.22", "mac": "02:00:00:00:00:24"},
			{"dev": "br-lan.9", "ip": "192.0.2.23", "mac": "02:00:00:00:00:25"}
		]}`))
	neighbor := func(dev, ip string) dg.ItemRef {
		return dg.ItemRef{Type: items.TypeNeighbor, Name: dev + "/" + ip}
	}
	for _, tc := range []struct {
		ref  dg.ItemRef
		want []string
	}{
		{neighbor("br-lan", "192.168.50.20"), []string{"interface/br-lan", "port/lan0", "port/lan1"}},
		{neighbor("br-mac", "192.168.60.20"), []string{"interface/br-mac"}},
		{neighbor("eth0", "192.0.2.20"), []string{"interface/eth0"}},
		// A bond takes its first port's MAC; a VLAN follows its parent's,
		// unless the intent sets its own.
		{neighbor("bond0", "192.0.2.21"), []string{"interface/bond0", "port/eth1", "port/eth2"}},
		{neighbor("bond0.7", "192.0.2.22"), []string{"interface/bond0.7", "port/eth1", "port/eth2"}},
		{neighbor("br-lan.9", "192.0.2.23"), []string{"interface/br-lan.9"}},
	} {
		if got := needs(t, g, tc.ref); !slices.Equal(got, tc.want) {
			t.Errorf("%v needs %q, want %q", tc.ref, got, tc.want)
		}
	}
}

// Issue 7: a route with a gateway and no dev was not withdrawn when the
// link its gateway is reached through lost carrier, unlike the same route
// with dev. The renderer now resolves the device as the kernel does: the
// longest declared subnet (an address's, or an on-link route's with dev,
// in the route's table first, then main) holding the gateway; a tie goes
// to an address, then to a physical interface, then to the first name. No
// match keeps the route without a device dependency.
func TestRenderRouteWithoutDevResolvesItsDevice(t *testing.T) {
	g := mustRender(t, parse(t, `{"version": 1,
		"interfaces": [
			{"name": "eth0", "type": "physical", "addresses": ["10.0.0.2/8", "2001:db8::2/64"]},
			{"name": "eth1", "type": "physical", "addresses": ["10.1.0.2/16"]},
			{"name": "eth2", "type": "physical"},
			{"name": "eth3", "type": "physical"},
			{"name": "br0", "type": "bridge", "addresses": ["192.168.1.1/24"]}
		],
		"routes": [
			{"to": "198.51.100.0/24", "via": "10.1.0.1"},
			{"to": "198.51.101.0/24", "via": "10.2.0.1"},
			{"to": "172.16.0.0/24", "dev": "eth2"},
			{"to": "198.51.102.0/24", "via": "172.16.0.1"},
			{"to": "10.1.5.0/24", "dev": "eth3", "table": 100},
			{"to": "198.51.103.0/24", "via": "10.1.5.1", "table": 100},
			{"to": "198.51.104.0/24", "via": "10.1.5.1"},
			{"to": "2001:db8:1::/64", "via": "2001:db8::1"},
			{"to": "198.51.105.0/24", "via": "192.168.1.254"},
			{"to": "198.51.106.0/24", "via": "203.0.113.1"},
			{"to": "198.51.107.0/24", "via": "10.1.0.1", "dev": "eth1"}
		]}`))
	route := func(table, dst string) dg.ItemRef {
		return dg.ItemRef{Type: items.TypeRoute, Name: table + " " + dst}
	}
	for _, tc := range []struct {
		ref  dg.ItemRef
		want []string
	}{
		// Longest prefix: 10.1.0.0/16 on eth1, not 10.0.0.0/8 on eth0.
		{route("main", "198.51.100.0/24 metric 0"), []string{"link/eth1", "address/eth1/10.1.0.2/16"}},
		{route("main", "198.51.101.0/24 metric 0"), []string{"link/eth0", "address/eth0/10.0.0.2/8"}},
		// An on-link route with dev puts the gateway on eth2.
		{route("main", "198.51.102.0/24 metric 0"), []string{"link/eth2", "route/main 172.16.0.0/24 metric 0"}},
		// In table 100, its own on-link route wins; main's route to the same
		// gateway does not see table 100's.
		{route("table 100", "198.51.103.0/24 metric 0"), []string{"link/eth3", "route/table 100 10.1.5.0/24 metric 0"}},
		{route("main", "198.51.104.0/24 metric 0"), []string{"link/eth1", "address/eth1/10.1.0.2/16"}},
		{route("main", "2001:db8:1::/64 metric 1024"), []string{"link/eth0", "address/eth0/2001:db8::2/64"}},
		// A bridge has no carrier of its own to wait for, as with dev.
		{route("main", "198.51.105.0/24 metric 0"), []string{"address/br0/192.168.1.1/24"}},
		// Nothing declared holds the gateway: as before, no device.
		{route("main", "198.51.106.0/24 metric 0"), nil},
		// With dev, unchanged.
		{route("main", "198.51.107.0/24 metric 0"), []string{"interface/eth1", "link/eth1", "address/eth1/10.1.0.2/16"}},
	} {
		if got := needs(t, g, tc.ref); !slices.Equal(got, tc.want) {
			t.Errorf("%v needs %q, want %q", tc.ref, got, tc.want)
		}
	}
}
