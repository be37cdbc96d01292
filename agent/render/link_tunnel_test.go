package render

import (
	"net/netip"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// The four tunnel types render to TunnelAttrs with the intent's defaults
// spelled out, depend on their parent, and come back from their items
// (what `netagent show` sees) as the same intent.
func TestTunnelsRenderAndBack(t *testing.T) {
	g := mustRender(t, parse(t, `{"version": 1, "interfaces": [
		{"name": "eth0", "type": "physical"},
		{"name": "gre1", "type": "gre", "gre": {"local": "192.0.2.1", "remote": "198.51.100.2", "ttl": 64, "key": 42, "parent": "eth0"}},
		{"name": "gre2", "type": "gre", "gre": {"remote": "198.51.100.3", "ikey": 1, "okey": 2, "pmtudisc": false}},
		{"name": "ipip1", "type": "ipip", "ipip": {"local": "192.0.2.1", "remote": "198.51.100.2"}},
		{"name": "sit1", "type": "sit", "sit": {"remote": "198.51.100.2", "ttl": 255}},
		{"name": "ip6t1", "type": "ip6tnl", "ip6tnl": {"local": "2001:db8::1", "remote": "2001:db8::2", "mode": "ip6ip6", "encapLimit": 0, "hopLimit": 0}},
		{"name": "ip6t2", "type": "ip6tnl", "ip6tnl": {"remote": "2001:db8::3", "mode": "any"}}]}`))
	a := netip.MustParseAddr
	want := map[string]*items.TunnelAttrs{
		"gre1":  {Type: items.KindGRE, Local: a("192.0.2.1"), Remote: a("198.51.100.2"), TTL: 64, IKey: 42, OKey: 42, Parent: "eth0"},
		"gre2":  {Type: items.KindGRE, Remote: a("198.51.100.3"), IKey: 1, OKey: 2, NoPMTUDisc: true},
		"ipip1": {Type: items.KindIPIP, Local: a("192.0.2.1"), Remote: a("198.51.100.2")},
		"sit1":  {Type: items.KindSIT, Remote: a("198.51.100.2"), TTL: 255},
		"ip6t1": {Type: items.KindIP6Tnl, Local: a("2001:db8::1"), Remote: a("2001:db8::2"), Mode: "ip6ip6"},
		"ip6t2": {Type: items.KindIP6Tnl, Remote: a("2001:db8::3"), TTL: 64, EncapLimit: 4},
	}
	for name, w := range want {
		got, ok := g.Get(items.InterfaceRef(name))
		if !ok {
			t.Errorf("%s not rendered", name)
			continue
		}
		i := got.(*items.Interface)
		if i.Kind != w.Type || !i.Attrs.Equal(w) {
			t.Errorf("%s: got %v, want %v", name, i, w)
		}
	}
	if p := items.ParentOf(mustGet(t, g, "gre1")); p != "eth0" {
		t.Errorf("gre1's parent %q", p)
	}
	back, data := reparse(t, ToIntent(itemsOf(g)))
	if err := back.Validate(); err != nil {
		t.Fatalf("invalid: %v\n%s", err, data)
	}
	sameItems(t, mustRender(t, back), g)
}

func mustGet(t *testing.T, g *dg.Graph, name string) *items.Interface {
	t.Helper()
	it, ok := g.Get(items.InterfaceRef(name))
	if !ok {
		t.Fatalf("%s not rendered", name)
	}
	return it.(*items.Interface)
}

// A tunnel read back without a hint (what `netagent show` reads) carries
// its local address as the device address (4 or 16 bytes); it is no MAC
// address, and show --json leaves it out, so that its output applies.
func TestTunnelShowHasNoMAC(t *testing.T) {
	gre := &items.Interface{IfName: "gre1", Kind: items.KindGRE, AdminUp: true, MAC: []byte{192, 0, 2, 1},
		Attrs: &items.TunnelAttrs{Type: items.KindGRE, Local: netip.MustParseAddr("192.0.2.1")}}
	ip6 := &items.Interface{IfName: "ip6t1", Kind: items.KindIP6Tnl, AdminUp: true, MAC: netip.MustParseAddr("2001:db8::1").AsSlice(),
		Attrs: &items.TunnelAttrs{Type: items.KindIP6Tnl, Local: netip.MustParseAddr("2001:db8::1"), TTL: 64, EncapLimit: 4}}
	back, data := reparse(t, ToIntent([]dg.Item{gre, ip6}))
	if err := back.Validate(); err != nil {
		t.Fatalf("show's intent is invalid: %v\n%s", err, data)
	}
	for _, ifc := range back.Interfaces {
		if ifc.MAC != "" {
			t.Errorf("%s: mac %q", ifc.Name, ifc.MAC)
		}
	}
}
