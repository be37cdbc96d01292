package l3

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// addPeerAddr adds someone else's point-to-point address, as
// `ip addr add LOCAL peer PEER/LEN` does.
func (k *FakeKernel) addPeerAddr(dev, prefix, peer string, proto uint8) {
	k.mu.Lock()
	defer k.mu.Unlock()
	a := kernelAddr{index: k.index(dev), prefix: netip.MustParsePrefix(prefix), peer: netip.MustParseAddr(peer), proto: proto}
	if err := k.newAddr(unix.NLM_F_CREATE|unix.NLM_F_EXCL, a); err != nil {
		panic(err)
	}
}

// A point-to-point address (Peer) is added with its peer as IFA_ADDRESS
// and no broadcast, read back Equal to its item (peer included), and
// deleted by a request the kernel matches (the peer as IFA_ADDRESS).
func TestFakeAddressPeerRoundTrip(t *testing.T) {
	e := newFakeEnv(t)
	cfg := &addressConfigurator{nlh: e.k, open: e.k.open, promotes: e.k.promotes}
	want := &items.Address{Dev: "up0", Prefix: pfx("10.9.0.1/32"), Peer: netip.MustParseAddr("10.9.0.2")}
	if err := cfg.Create(ctx, want); err != nil {
		t.Fatal(err)
	}
	k, ok := e.k.addrOn("up0", "10.9.0.1/32")
	if !ok || k.peer != want.Peer || !k.owned() {
		t.Fatalf("after the create: %+v (%v), want ours with peer 10.9.0.2", k, ok)
	}
	got, err := e.k.ReadBack(dg.New("intended", want))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, it := range got {
		found = found || it.Equal(want)
	}
	if !found {
		t.Errorf("read back %v, want %v among them", got, want)
	}
	if err := cfg.Create(ctx, want); err != nil || len(e.k.Take()) > 1 {
		t.Errorf("a second create: %v", err)
	}
	other := &items.Address{Dev: "up0", Prefix: pfx("10.9.0.1/32"), Peer: netip.MustParseAddr("10.9.0.3")}
	if err := cfg.Create(ctx, other); err != nil {
		t.Fatalf("moving our address to another peer: %v", err)
	}
	if k, _ := e.k.addrOn("up0", "10.9.0.1/32"); k.peer != other.Peer {
		t.Errorf("after the move: peer %v, want 10.9.0.3", k.peer)
	}
	if err := cfg.Delete(ctx, other); err != nil {
		t.Fatal(err)
	}
	if k, ok := e.k.addrOn("up0", "10.9.0.1/32"); ok {
		t.Errorf("after the delete: %+v is still there", k)
	}
}

// With adopt, someone else's point-to-point address of the item's peer is
// taken over with the mark alone (Adoptions finds it Equal); one of
// another peer, or an item without a peer, is refused naming both peers
// and errAdoptDeletes, Clashes predicting the same error, nothing sent.
func TestFakeAddressPeerAdopt(t *testing.T) {
	e := newFakeEnv(t)
	e.k.addPeerAddr("up0", "10.9.0.1/32", "10.9.0.2", unix.RTPROT_STATIC)
	e.k.Take()
	cfg := &addressConfigurator{nlh: e.k, open: e.k.open, promotes: e.k.promotes, adopt: true}
	for _, c := range []struct {
		peer, says string
	}{
		{"10.9.0.3", "peer 10.9.0.2 (the intent's: 10.9.0.3)"},
		{"", "peer 10.9.0.2 (the intent's: none)"},
	} {
		a := &items.Address{Dev: "up0", Prefix: pfx("10.9.0.1/32")}
		if c.peer != "" {
			a.Peer = netip.MustParseAddr(c.peer)
		}
		err := cfg.Create(ctx, a)
		if !errors.Is(err, ErrNotOwned) || !errors.Is(err, errAdoptDeletes) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("adopting %v: %v, want ErrNotOwned saying %q", a, err, c.says)
		}
		clashes, cerr := e.k.Clashes(dg.New("intended", a))
		if cerr != nil || clashes[dg.Ref(a)] == nil || clashes[dg.Ref(a)].Error() != err.Error() {
			t.Errorf("Clashes of %v: %v %v, want the create's error", a, clashes, cerr)
		}
		if found, err := e.k.Adoptions(dg.New("intended", a)); err != nil || len(found) > 0 {
			t.Errorf("Adoptions of %v: %v %v, want none", a, found, err)
		}
	}
	if w := e.k.Take(); len(w) > 0 {
		t.Errorf("the refusals sent %v", w)
	}
	want := &items.Address{Dev: "up0", Prefix: pfx("10.9.0.1/32"), Peer: netip.MustParseAddr("10.9.0.2")}
	found, err := e.k.Adoptions(dg.New("intended", want))
	if err != nil || found[dg.Ref(want)] == nil || !found[dg.Ref(want)].Equal(want) {
		t.Fatalf("Adoptions: %v %v, want it Equal to %v (mark only)", found, err, want)
	}
	if err := cfg.Create(ctx, want); err != nil {
		t.Fatal(err)
	}
	if w := e.k.Take(); len(w) != 1 {
		t.Errorf("the adoption sent %v, want one in-place replace", w)
	}
	if k, ok := e.k.addrOn("up0", "10.9.0.1/32"); !ok || !k.owned() || k.peer != want.Peer {
		t.Errorf("after the adoption: %+v (%v), want it ours with its peer", k, ok)
	}
}
