package render

import (
	"maps"
	"slices"
	"testing"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// renderDoc parses and renders an intent document.
func renderDoc(t *testing.T, doc string) *dg.Graph {
	t.Helper()
	in, err := intent.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestRenderEthtool(t *testing.T) {
	g := renderDoc(t, `{"version": 1, "interfaces": [
		{"name": "eth0", "type": "physical", "mtu": 9000, "ethtool": {"features": {"gro": false}, "channels": {"combined": 4}}},
		{"name": "eth1", "type": "physical", "ethtool": {}}]}`)
	it, ok := g.Get(items.EthtoolRef("eth0"))
	if !ok {
		t.Fatal("no ethtool/eth0")
	}
	want := map[string]uint32{"features/rx-gro": 0, "channels/combined": 4}
	if got := it.(*items.Ethtool).Settings; !maps.Equal(got, want) {
		t.Errorf("settings %v, want %v", got, want)
	}
	if got := it.(*items.Ethtool).MTU; got != 9000 {
		t.Errorf("the item follows MTU %d, want the interface's 9000", got)
	}
	if deps := g.Dependencies(items.EthtoolRef("eth0")); len(deps) != 1 || deps[0].RequiredItem != items.InterfaceRef("eth0") {
		t.Errorf("deps %v: want the interface (applied after its MTU)", deps)
	}
	if _, ok := g.Get(items.EthtoolRef("eth1")); ok {
		t.Error("an empty section rendered an item")
	}
}

// TestEthtoolToIntentRoundTrips: what show prints renders the same item.
func TestEthtoolToIntentRoundTrips(t *testing.T) {
	g := renderDoc(t, `{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "ethtool": {
		"features": {"rx-gro": false, "tso": true}, "channels": {"combined": 4}, "rings": {"rx": 4096},
		"coalesce": {"rx-usecs": 50, "adaptive-tx": true}, "pause": {"autoneg": false},
		"link": {"speed": 1000, "duplex": "full", "autoneg": true, "advertise": ["100baseT/Full", "1000baseT/Full"]}, "wakeOnLan": ["phy", "magic"]}}]}`)
	it, _ := g.Get(items.EthtoolRef("eth0"))
	back := ToIntent([]dg.Item{it})
	if len(back.Interfaces) != 1 || back.Interfaces[0].Ethtool == nil {
		t.Fatalf("ToIntent: %+v", back.Interfaces)
	}
	if got := back.Interfaces[0].Ethtool.Settings(); !maps.Equal(got, it.(*items.Ethtool).Settings) {
		t.Errorf("round trip %v, want %v", got, it.(*items.Ethtool).Settings)
	}
	if got := back.Interfaces[0].Ethtool.Sets(); !maps.EqualFunc(got, it.(*items.Ethtool).Sets, slices.Equal) || len(got) != 1 {
		t.Errorf("round trip of the sets %v, want %v", got, it.(*items.Ethtool).Sets)
	}
}
