package link

import (
	"context"
	"errors"
	"slices"
	"strings"
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
// cannot become it in place: it is not adopted (no adoption), Clashes
// predicts the very error the create fails with, naming what differs, and
// the create writes nothing (adopt never deletes someone else's link); a
// link no item names is not touched.
func TestFakeAdoptOtherKind(t *testing.T) {
	f, dir, ctx := NewFakeKernel(), t.TempDir(), context.Background()
	for _, name := range []string{"br0", "other0"} {
		if err := f.LinkAdd(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	want := &items.Interface{IfName: "br0", Kind: items.KindBridge, Attrs: &items.BridgeAttrs{}}
	intended := dg.New("intended", want)
	found, err := f.Adoptions(dir, intended)
	if got, ok := found[dg.Ref(want)]; err != nil || ok {
		t.Fatalf("Adoptions: %v %v, want no adoption of br0 (a dummy)", got, err)
	}
	clashes, err := f.Clashes(dir, intended)
	if err != nil {
		t.Fatal(err)
	}
	predicted := clashes[dg.Ref(want)]
	f.Take()
	err = adoptingInterfaces(t, f, dir).Create(ctx, want)
	if !errors.Is(err, ErrNotOwned) || !errors.Is(err, errAdoptRecreates) || !strings.Contains(err.Error(), "as dummy (the intent's: bridge") {
		t.Fatalf("create: %v, want ErrNotOwned naming the dummy and errAdoptRecreates", err)
	}
	if predicted == nil || predicted.Error() != err.Error() {
		t.Errorf("Clashes predicted %v, the create failed with %v", predicted, err)
	}
	if w := f.Take(); len(w) > 0 {
		t.Errorf("writes of the refused adoption: %v, want none", w)
	}
	if l, err := f.LinkByName("br0"); err != nil || l.Type() != "dummy" || owned(l) {
		t.Errorf("br0 after the refusal: %v %v, want the dummy as found", l, err)
	}
}
