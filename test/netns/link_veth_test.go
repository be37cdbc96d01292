package netns_test

import (
	"testing"

	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
)

// TestLinkVeth drives a veth pair through create, modify in place,
// recreate (new peer) and delete, checking each step with ip -j.
func TestLinkVeth(t *testing.T) {
	tgt := testns.New(t)
	env := newLinkEnv(t, tgt)

	v0 := &items.Interface{IfName: "v0", Kind: items.KindVeth, AdminUp: true, MTU: 1400,
		Alias: "to v1", MAC: linkMAC("02:00:00:00:00:01"), Attrs: &items.VethAttrs{Peer: "v1"}}
	log := env.applyTwice(v0)
	linkWantOps(t, log, "create interface/v0")

	got := linkMustShow(t, tgt, "v0")
	if got.LinkInfo.InfoKind != "veth" || got.Link != "v1" || got.MTU != 1400 || !got.up() ||
		got.Address != "02:00:00:00:00:01" || got.IfAlias != "netagent:to v1" {
		t.Errorf("ip link v0 = %+v", got)
	}
	if peer := linkMustShow(t, tgt, "v1"); peer.IfAlias != "netagent" || peer.Link != "v0" {
		t.Errorf("peer v1 = %+v, want marked and linked to v0", peer)
	}

	// In place: MTU, alias, down.
	v0b := &items.Interface{IfName: "v0", Kind: items.KindVeth, MTU: 1300, Alias: "renamed",
		Attrs: &items.VethAttrs{Peer: "v1"}}
	linkWantOps(t, env.applyTwice(v0b), "modify interface/v0")
	got = linkMustShow(t, tgt, "v0")
	if got.MTU != 1300 || got.up() || got.IfAlias != "netagent:renamed" || got.Address != "02:00:00:00:00:01" {
		t.Errorf("after modify: ip link v0 = %+v", got)
	}

	// A new peer name cannot change in place: recreate.
	v0c := &items.Interface{IfName: "v0", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "v2"}}
	linkWantOps(t, env.applyTwice(v0c), "delete interface/v0", "create interface/v0")
	if got := linkMustShow(t, tgt, "v0"); got.Link != "v2" {
		t.Errorf("after recreate: v0 links to %q, want v2", got.Link)
	}
	linkMustBeGone(t, tgt, "v1")

	// Delete, twice. With nothing intended, both marked ends are read back
	// and deleted (the first delete takes the pair; the second finds its
	// end gone, which is success).
	linkWantOps(t, env.apply(), "delete interface/v0", "delete interface/v2")
	linkMustBeGone(t, tgt, "v0")
	linkMustBeGone(t, tgt, "v2")
	if log := env.apply(); len(log) != 0 {
		t.Errorf("second delete ran operations:\n%s", log)
	}
}

// TestLinkVethBothEnds declares both ends of a pair: the second create finds
// its end made by the first and only applies its settings.
func TestLinkVethBothEnds(t *testing.T) {
	tgt := testns.New(t)
	env := newLinkEnv(t, tgt)
	a := &items.Interface{IfName: "va", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "vb"}}
	b := &items.Interface{IfName: "vb", Kind: items.KindVeth, AdminUp: true, MTU: 1280,
		Alias: "b end", Attrs: &items.VethAttrs{Peer: "va"}}
	linkWantOps(t, env.applyTwice(a, b), "create interface/va", "create interface/vb")
	if got := linkMustShow(t, tgt, "vb"); got.MTU != 1280 || !got.up() || got.IfAlias != "netagent:b end" {
		t.Errorf("ip link vb = %+v", got)
	}
	// Declaring only one end again: the other is part of it, not deleted.
	if log := env.apply(a); len(log) != 0 {
		t.Errorf("dropping the declared peer ran operations:\n%s", log)
	}
	linkMustShow(t, tgt, "vb")
}

// TestLinkVethPeerNamespace puts the peer into another named namespace,
// where it is not marked (it plays a physical link there).
func TestLinkVethPeerNamespace(t *testing.T) {
	tgt := testns.New(t)
	other := testns.New(t)
	env := newLinkEnv(t, tgt)
	v := &items.Interface{IfName: "vh", Kind: items.KindVeth, AdminUp: true,
		Attrs: &items.VethAttrs{Peer: "eth0", PeerNetns: other.Name}}
	linkWantOps(t, env.applyTwice(v), "create interface/vh")
	peer := linkMustShow(t, other, "eth0")
	if peer.IfAlias != "" || peer.LinkInfo.InfoKind != "veth" {
		t.Errorf("peer in %s = %+v, want an unmarked veth", other.Name, peer)
	}
	// In the other namespace the peer is an external link.
	otherEnv := newLinkEnv(t, other)
	cur := otherEnv.readBack(nil)
	if _, ok := cur.Get(items.LinkRef("eth0")); !ok {
		t.Errorf("other namespace: eth0 not read back as a link")
	}
	linkWantOps(t, env.apply(), "delete interface/vh")
	linkMustBeGone(t, other, "eth0")
}
