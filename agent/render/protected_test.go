package render

import (
	"slices"
	"testing"
)

// "protected" goes beside the graph, never into an item: toggling it
// renders equal items, so an apply writes nothing for it.
func TestProtectedLinksBesideTheItems(t *testing.T) {
	doc := func(protected bool) map[string][]byte {
		p := "false"
		if protected {
			p = "true"
		}
		return map[string][]byte{"a.json": []byte(`{"version": 1, "interfaces": [
			{"name": "eth0", "type": "physical", "mtu": 1500, "protected": ` + p + `, "addresses": ["192.0.2.10/24"]},
			{"name": "br0", "type": "bridge", "protected": true},
			{"name": "lan0", "type": "veth", "veth": {"peer": "lan0-peer"}}]}`)}
	}
	on, onNames, err := LoadProtected(doc(true))
	if err != nil {
		t.Fatal(err)
	}
	off, offNames, err := LoadProtected(doc(false))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(onNames, []string{"br0", "eth0"}) {
		t.Errorf("ProtectedLinks %v, want [br0 eth0]", onNames)
	}
	if !slices.Equal(offNames, []string{"br0"}) {
		t.Errorf("ProtectedLinks %v, want [br0]", offNames)
	}
	if !slices.Equal(on.Refs(), off.Refs()) {
		t.Fatalf("refs differ: %v vs %v", on.Refs(), off.Refs())
	}
	for _, ref := range on.Refs() {
		a, _ := on.Get(ref)
		b, _ := off.Get(ref)
		if !a.Equal(b) {
			t.Errorf("%s: %v vs %v: protection changed the item", ref, a, b)
		}
	}
	if ProtectedLinks(nil) != nil {
		t.Error("ProtectedLinks of no files")
	}
}
