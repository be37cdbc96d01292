package render

import (
	"net"
	"testing"

	"github.com/netagent/netagent/items"
)

// A dummy renders to an Interface of kind dummy without attributes, with
// the common settings, and comes back from its items (what `netagent show`
// sees) as the same intent.
func TestDummyRenderAndBack(t *testing.T) {
	g := mustRender(t, parse(t, `{"version": 1, "interfaces": [
		{"name": "dm0", "type": "dummy", "mtu": 9000, "mac": "02:00:00:00:00:09", "alias": "svc", "state": "down",
		 "addresses": ["192.0.2.1/32"]},
		{"name": "dm1", "type": "dummy"}]}`))
	want := &items.Interface{IfName: "dm0", Kind: items.KindDummy, MTU: 9000, AdminUp: false,
		MAC: net.HardwareAddr{2, 0, 0, 0, 0, 9}, Alias: "svc"}
	got, ok := g.Get(items.InterfaceRef("dm0"))
	if !ok || !got.Equal(want) {
		t.Errorf("dm0: got %v, want %v", got, want)
	}
	if got, ok := g.Get(items.InterfaceRef("dm1")); !ok || got.(*items.Interface).Attrs != nil || got.(*items.Interface).Kind != items.KindDummy {
		t.Errorf("dm1: got %v", got)
	}
	back, data := reparse(t, ToIntent(itemsOf(g)))
	if err := back.Validate(); err != nil {
		t.Fatalf("invalid: %v\n%s", err, data)
	}
	sameItems(t, mustRender(t, back), g)
}
