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
			{"name": "eth0", "type": "physical"}
		],
		"neighbors": [
			{"dev": "br-lan", "ip": "192.168.50.20", "mac": "02:00:00:00:00:20"},
			{"dev": "br-mac", "ip": "192.168.60.20", "mac": "02:00:00:00:00:21"},
			{"dev": "eth0", "ip": "192.0.2.20", "mac": "02:00:00:00:00:22"}
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
	} {
		if got := needs(t, g, tc.ref); !slices.Equal(got, tc.want) {
			t.Errorf("%v needs %q, want %q", tc.ref, got, tc.want)
		}
	}
}
