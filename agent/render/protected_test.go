package render

import (
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
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
	on, err := Load(doc(true))
	if err != nil {
		t.Fatal(err)
	}
	off, err := Load(doc(false))
	if err != nil {
		t.Fatal(err)
	}
	if got := ProtectedLinks(on); !slices.Equal(got, []string{"br0", "eth0"}) {
		t.Errorf("ProtectedLinks %v, want [br0 eth0]", got)
	}
	if got := ProtectedLinks(off); !slices.Equal(got, []string{"br0"}) {
		t.Errorf("ProtectedLinks %v, want [br0]", got)
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
	if ProtectedLinks(nil) != nil || ProtectedLinks(dg.New("x")) != nil {
		t.Error("ProtectedLinks of a graph without any")
	}
}
