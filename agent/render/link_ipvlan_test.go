package render

import (
	"testing"

	"github.com/netagent/netagent/items"
)

// An ipvlan renders to an Interface of kind ipvlan with its parent, mode
// and flag (l3 and bridge, the defaults, left out), and comes back from
// its items (what `netagent show` sees) as the same intent.
func TestIpvlanRenderAndBack(t *testing.T) {
	g := mustRender(t, parse(t, `{"version": 1, "interfaces": [
		{"name": "eth0", "type": "physical", "mtu": 9000},
		{"name": "iv0", "type": "ipvlan", "mtu": 9000, "alias": "pod", "ipvlan": {"parent": "eth0", "mode": "l2", "flag": "vepa"},
		 "addresses": ["192.0.2.1/24"]},
		{"name": "iv1", "type": "ipvlan", "state": "down", "ipvlan": {"parent": "eth0", "mode": "l2", "flag": "vepa"}},
		{"name": "eth1", "type": "physical"},
		{"name": "iv2", "type": "ipvlan", "ipvlan": {"parent": "eth1", "mode": "l3", "flag": "bridge"}}]}`))
	want := &items.Interface{IfName: "iv0", Kind: items.KindIpvlan, MTU: 9000, AdminUp: true, Alias: "pod",
		Attrs: &items.IpvlanAttrs{Parent: "eth0", Mode: "l2", Flag: "vepa"}}
	if got, ok := g.Get(items.InterfaceRef("iv0")); !ok || !got.Equal(want) {
		t.Errorf("iv0: got %v, want %v", got, want)
	}
	back, data := reparse(t, ToIntent(itemsOf(g)))
	if err := back.Validate(); err != nil {
		t.Fatalf("invalid: %v\n%s", err, data)
	}
	sameItems(t, mustRender(t, back), g)
	for _, ifc := range back.Interfaces {
		if ifc.Name == "iv2" && (ifc.Ipvlan == nil || ifc.Ipvlan.Mode != "" || ifc.Ipvlan.Flag != "") {
			t.Errorf("iv2 back: %+v, want the defaults left out", ifc.Ipvlan)
		}
	}
}
