package render

import (
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// A vrf renders to an Interface of kind vrf with its table; its members
// to Ports of MasterKind vrf; the addresses, routes and neighbours on a
// member wait for the member's Port (the enslave flushes them), those of
// other interfaces do not. Back from the items (what `netagent show`
// sees), it is the same intent.
func TestVRFRenderAndBack(t *testing.T) {
	g := mustRender(t, parse(t, `{"version": 1, "interfaces": [
		{"name": "blue", "type": "vrf", "mtu": 9000, "vrf": {"table": 10}},
		{"name": "eth0", "type": "physical", "master": "blue", "addresses": ["192.0.2.1/24", "2001:db8::1/64"]},
		{"name": "eth1", "type": "physical", "addresses": ["198.51.100.1/24"]}],
		"routes": [{"to": "10.9.0.0/16", "via": "192.0.2.2", "dev": "eth0", "table": 10},
			{"to": "10.7.0.0/16", "table": 10, "nexthops": [{"via": "192.0.2.5", "dev": "eth0"}, {"via": "192.0.2.6", "dev": "eth0"}]},
			{"to": "10.8.0.0/16", "via": "198.51.100.2", "dev": "eth1"}],
		"neighbors": [{"dev": "eth0", "ip": "192.0.2.3", "mac": "02:00:00:00:00:03"}]}`))
	want := &items.Interface{IfName: "blue", Kind: items.KindVRF, MTU: 9000, AdminUp: true, Attrs: &items.VRFAttrs{Table: 10}}
	if got, ok := g.Get(items.InterfaceRef("blue")); !ok || !got.Equal(want) {
		t.Errorf("blue: got %v, want %v", got, want)
	}
	port := dg.ItemRef{Type: items.TypePort, Name: "eth0"}
	if got, ok := g.Get(port); !ok || !got.Equal(&items.Port{IfName: "eth0", Master: "blue", MasterKind: items.KindVRF}) {
		t.Errorf("port eth0: %v", got)
	}
	waits := func(it dg.Item) bool {
		return slices.ContainsFunc(it.Dependencies(), func(d dg.Dependency) bool { return d.RequiredItem == port })
	}
	for it := range g.Items() {
		onMember := false
		switch x := it.(type) {
		case *items.Address:
			onMember = x.Dev == "eth0"
		case *items.Route:
			onMember = x.Dev == "eth0" || len(x.Nexthops) > 0
		case *items.Neighbor:
			onMember = x.Dev == "eth0"
		default:
			continue
		}
		if waits(it) != onMember {
			t.Errorf("%v waits for port/eth0: %v, want %v", dg.Ref(it), waits(it), onMember)
		}
	}
	back, data := reparse(t, ToIntent(itemsOf(g)))
	if err := back.Validate(); err != nil {
		t.Fatalf("invalid: %v\n%s", err, data)
	}
	sameItems(t, mustRender(t, back), g)
}

// `netagent show` reads a vrf back without a hint, with the MTU the kernel
// gives it (65575, IP6_MAX_MTU): that intent validates and renders back to
// the same items.
func TestVRFShownWithKernelMTU(t *testing.T) {
	shown := []dg.Item{&items.Interface{IfName: "blue", Kind: items.KindVRF, MTU: 65575, AdminUp: true, Attrs: &items.VRFAttrs{Table: 10}}}
	back, data := reparse(t, ToIntent(shown))
	if err := back.Validate(); err != nil {
		t.Fatalf("invalid: %v\n%s", err, data)
	}
	sameItems(t, mustRender(t, back), dg.New("shown", shown...))
}
