package link

import (
	"context"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// adoptingInterfaces registers the configurators over f with Adopt and
// returns the interface configurator.
func adoptingInterfaces(t *testing.T, f *FakeKernel, stateDir string) reconciler.Configurator {
	t.Helper()
	reg := &reconciler.TypeRegistry{}
	if err := f.RegisterWith(reg, stateDir, Options{Adopt: true}); err != nil {
		t.Fatal(err)
	}
	return reg.Configurator(&items.Interface{})
}

// With Adopt, someone else's veth equal to the item gets only the mark:
// one alias write on it and one on its peer (whose alias is kept after
// the mark); Adoptions finds it equal to the item; a second create
// writes nothing.
func TestFakeAdoptVeth(t *testing.T) {
	f, dir, ctx := NewFakeKernel(), t.TempDir(), context.Background()
	if err := f.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "va"}, PeerName: "vap"}); err != nil {
		t.Fatal(err)
	}
	peer, _ := f.LinkByName("vap")
	if err := f.LinkSetAlias(peer, "to-lan"); err != nil {
		t.Fatal(err)
	}
	want := &items.Interface{IfName: "va", Kind: items.KindVeth, Attrs: &items.VethAttrs{Peer: "vap"}}
	found, err := f.Adoptions(dir, dg.New("intended", want))
	if got := found[dg.Ref(want)]; err != nil || got == nil || !got.Equal(want) {
		t.Fatalf("Adoptions: %v %v, want va equal to the item", got, err)
	}
	f.Take()
	cfg := adoptingInterfaces(t, f, dir)
	if err := cfg.Create(ctx, want); err != nil {
		t.Fatal(err)
	}
	if w := f.Take(); !slices.Equal(w, []string{"alias va", "alias vap"}) {
		t.Errorf("writes of the adoption: %v, want the two marks", w)
	}
	if peer, _ := f.LinkByName("vap"); peer.Attrs().Alias != "netagent:to-lan" {
		t.Errorf("the peer's alias: %q, want its own after the mark", peer.Attrs().Alias)
	}
	if err := cfg.Create(ctx, want); err != nil {
		t.Fatal(err)
	}
	if w := f.Take(); len(w) > 0 {
		t.Errorf("a second create wrote %v", w)
	}
}

// With Adopt, someone else's link of the item's name but another kind
// cannot become it in place: it is deleted and the item created (plan
// shows that recreate); a link no item names is not touched.
func TestFakeAdoptOtherKind(t *testing.T) {
	f, dir, ctx := NewFakeKernel(), t.TempDir(), context.Background()
	for _, name := range []string{"br0", "other0"} {
		if err := f.LinkAdd(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	want := &items.Interface{IfName: "br0", Kind: items.KindBridge, Attrs: &items.BridgeAttrs{}}
	found, err := f.Adoptions(dir, dg.New("intended", want))
	if got := found[dg.Ref(want)]; err != nil || got == nil || !items.NeedsRecreate(got, want) {
		t.Fatalf("Adoptions: %v %v, want br0 found as a dummy, to recreate", got, err)
	}
	f.Take()
	if err := adoptingInterfaces(t, f, dir).Create(ctx, want); err != nil {
		t.Fatal(err)
	}
	w := f.Take()
	if len(w) < 2 || w[0] != "del br0" || w[1] != "add br0" || slices.ContainsFunc(w, func(s string) bool { return s == "del other0" }) {
		t.Errorf("writes of the adoption: %v, want br0 deleted and added, other0 left alone", w)
	}
	if l, err := f.LinkByName("br0"); err != nil || l.Type() != "bridge" || !owned(l) {
		t.Errorf("br0 after the adoption: %v %v", l, err)
	}
}
