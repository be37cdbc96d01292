package render

import (
	"testing"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// TestDriftPolicies: every item of an object carries the object's policy
// (an interface's address and port included), an object's own policy wins
// over its file's, and each object takes its own file's.
func TestDriftPolicies(t *testing.T) {
	files, err := ParseFiles(map[string][]byte{
		"a.json": []byte(`{"version":1,"drift":"report",
			"interfaces":[{"name":"br0","type":"bridge","addresses":["192.0.2.1/24"]},
				{"name":"v0","type":"veth","veth":{"peer":"v1"},"master":"br0","drift":"repair"}],
			"routes":[{"to":"10.1.0.0/16","via":"192.0.2.9"},{"to":"10.2.0.0/16","via":"192.0.2.9","drift":"ignore"}],
			"sysctls":{"net.ipv4.ip_forward":"1"}}`),
		"b.json": []byte(`{"version":1,"routes":[{"to":"10.3.0.0/16","via":"192.0.2.9"},
			{"to":"10.4.0.0/16","via":"192.0.2.9","drift":"report"}]}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	g, err := RenderFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	p, err := DriftOf(files)
	if err != nil {
		t.Fatal(err)
	}
	route := func(dst string) dg.ItemRef {
		for it := range g.Items() {
			if r, ok := it.(*items.Route); ok && r.Dst.String() == dst {
				return dg.Ref(it)
			}
		}
		t.Fatalf("no route %s", dst)
		return dg.ItemRef{}
	}
	var addr dg.ItemRef
	for it := range g.Items() {
		if _, ok := it.(*items.Address); ok {
			addr = dg.Ref(it)
		}
	}
	want := map[dg.ItemRef]intent.DriftPolicy{
		items.InterfaceRef("br0"): intent.DriftReport,
		addr:                      intent.DriftReport,
		items.InterfaceRef("v0"):  intent.DriftRepair,
		route("10.1.0.0/16"):      intent.DriftReport,
		route("10.2.0.0/16"):      intent.DriftIgnore,
		route("10.3.0.0/16"):      intent.DriftRepair,
		route("10.4.0.0/16"):      intent.DriftReport,
		dg.Ref(&items.Sysctl{Key: "net.ipv4.ip_forward"}): intent.DriftReport,
	}
	for ref, w := range want {
		if got := p.Of(ref); got != w {
			t.Errorf("%s: policy %q, want %q", ref, got, w)
		}
	}
	for it := range g.Items() {
		if _, ok := it.(*items.Port); ok && p.Of(dg.Ref(it)) != intent.DriftRepair {
			t.Errorf("port of v0: %q, want its interface's repair", p.Of(dg.Ref(it)))
		}
	}

	// No drift anywhere: nothing to record, nothing rendered twice.
	plain, _ := ParseFiles(map[string][]byte{"c.json": []byte(`{"version":1,"routes":[{"to":"10.1.0.0/16","dev":"lo"}]}`)})
	if p, err := DriftOf(plain); p != nil || err != nil {
		t.Errorf("DriftOf without drift: %v, %v", p, err)
	}
}
