package render

import (
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

const bridgeVLANDoc = `{"version": 1, "interfaces": [
  {"name": "br0", "type": "bridge", "bridge": {"vlanFiltering": true, "vlans": [{"vid": 10, "pvid": true, "untagged": true}, {"vids": "20-22"}]}},
  {"name": "v0", "type": "veth", "veth": {"peer": "v0p"}, "master": "br0",
   "bridgePort": {"cost": 100, "priority": 0, "vlans": [{"vid": 10, "pvid": true, "untagged": true}, {"vids": "20-30"}, {"vid": 31}, {"vids": "40-41", "untagged": true}]}},
  {"name": "v1", "type": "veth", "veth": {"peer": "v1p"}, "master": "br0", "bridgePort": {"vlans": []}},
  {"name": "v2", "type": "veth", "veth": {"peer": "v2p"}, "master": "br0", "bridgePort": {"cost": 7}}
]}`

// A bridge's own VLANs and each port's become bridge-vlans items in
// canonical form (adjacent ranges of the same flags merged); cost and
// priority (0 included) go into the port item; an empty list is the empty
// set and an absent one no item (the kernel's default membership).
func TestRenderBridgeVLANs(t *testing.T) {
	g := mustRender(t, parse(t, bridgeVLANDoc))
	get := func(typ, name string) dg.Item {
		t.Helper()
		it, ok := g.Get(dg.ItemRef{Type: typ, Name: name})
		if !ok {
			t.Fatalf("no %s/%s", typ, name)
		}
		return it
	}
	self := get(items.TypeBridgeVLANs, "br0").(*items.BridgeVLANs)
	if !self.Self() || self.VLANs.String() != "10 pvid untagged, 20-22" {
		t.Errorf("bridge self: %s", self)
	}
	v0 := get(items.TypeBridgeVLANs, "v0").(*items.BridgeVLANs)
	if v0.Bridge != "br0" || v0.VLANs.String() != "10 pvid untagged, 20-31, 40-41 untagged" {
		t.Errorf("v0: %s", v0)
	}
	if v1 := get(items.TypeBridgeVLANs, "v1").(*items.BridgeVLANs); v1.VLANs == nil || len(v1.VLANs) != 0 {
		t.Errorf("v1: %s, want the empty set", v1)
	}
	if _, ok := g.Get(dg.ItemRef{Type: items.TypeBridgeVLANs, Name: "v2"}); ok {
		t.Error("v2 declares no vlans, yet has a bridge-vlans item")
	}
	p0 := get(items.TypePort, "v0").(*items.Port)
	if p0.Cost != 100 || p0.Priority == nil || *p0.Priority != 0 {
		t.Errorf("port v0: %s", p0)
	}
	if p2 := get(items.TypePort, "v2").(*items.Port); p2.Cost != 7 || p2.Priority != nil {
		t.Errorf("port v2: %s", p2)
	}
	deps := g.Dependencies(dg.Ref(v0))
	if len(deps) != 1 || deps[0].RequiredItem != (dg.ItemRef{Type: items.TypePort, Name: "v0"}) ||
		!deps[0].MustSatisfy(p0) || deps[0].MustSatisfy(&items.Port{IfName: "v0", Master: "br1"}) {
		t.Errorf("v0 vlans depend on %v, want port/v0 while its master is br0", deps)
	}
}

// ToIntent(Render(x)) renders the same items, and spells the VLANs back
// in canonical form.
func TestToIntentBridgeVLANsRoundTrip(t *testing.T) {
	g := mustRender(t, parse(t, bridgeVLANDoc))
	back, data := reparse(t, ToIntent(itemsOf(g)))
	sameItems(t, mustRender(t, back), g)
	for _, want := range []string{`"vids": "20-31"`, `"vlans": []`, `"priority": 0`, `"cost": 7`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("show lacks %s:\n%s", want, data)
		}
	}
}

// Read back from a bridge without VLAN filtering, VLANs are left out of
// the intent (which allows none there) and the intent stays valid.
func TestToIntentBridgeVLANsWithoutFiltering(t *testing.T) {
	list := []dg.Item{
		&items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true},
		&items.Interface{IfName: "v0", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "v0p"}},
		&items.Port{IfName: "v0", Master: "br0", MasterKind: items.KindBridge},
		&items.BridgeVLANs{IfName: "br0", Bridge: "br0", VLANs: items.VLANSet{{From: 5, To: 5}}},
		&items.BridgeVLANs{IfName: "v0", Bridge: "br0", VLANs: items.VLANSet{{From: 5, To: 5}}},
	}
	in, data := reparse(t, ToIntent(list))
	if err := in.Validate(); err != nil || strings.Contains(string(data), "vlans") {
		t.Errorf("validate: %v\n%s", err, data)
	}
}
