package netns_test

import (
	"testing"

	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
)

// TestLinkMacvlan puts a macvlan on a NIC (a veth end made by ip), changes
// its mode in place, then to passthru (a recreate), and deletes it.
func TestLinkMacvlan(t *testing.T) {
	tgt := testns.New(t)
	env := newLinkEnv(t, tgt)
	linkExec(t, tgt, "ip", "link", "add", "eth0", "type", "veth", "peer", "name", "eth0p")
	eth0 := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true}
	mv := func(mode string, mtu int) *items.Interface {
		return &items.Interface{IfName: "mv0", Kind: items.KindMacvlan, AdminUp: true, MTU: mtu,
			Attrs: &items.MacvlanAttrs{Parent: "eth0", Mode: mode}}
	}
	linkWantOps(t, env.applyTwice(eth0, mv("bridge", 1400)), "modify interface/eth0", "create interface/mv0")
	got := linkMustShow(t, tgt, "mv0")
	if got.LinkInfo.InfoKind != "macvlan" || got.Link != "eth0" || got.MTU != 1400 || !got.up() ||
		got.LinkInfo.InfoData["mode"] != "bridge" || got.IfAlias != "netagent" {
		t.Errorf("ip link mv0 = %+v", got)
	}

	linkWantOps(t, env.applyTwice(eth0, mv("private", 1400)), "modify interface/mv0")
	if m := linkMustShow(t, tgt, "mv0").LinkInfo.InfoData["mode"]; m != "private" {
		t.Errorf("after modify: mode %v, want private", m)
	}
	// "" is the kernel's default, vepa, and reads back as "".
	linkWantOps(t, env.applyTwice(eth0, mv("", 0)), "modify interface/mv0")
	if m := linkMustShow(t, tgt, "mv0").LinkInfo.InfoData["mode"]; m != "vepa" {
		t.Errorf("after modify: mode %v, want vepa", m)
	}

	linkWantOps(t, env.applyTwice(eth0, mv("passthru", 0)), "delete interface/mv0", "create interface/mv0")
	if m := linkMustShow(t, tgt, "mv0").LinkInfo.InfoData["mode"]; m != "passthru" {
		t.Errorf("after recreate: mode %v, want passthru", m)
	}

	linkWantOps(t, env.applyTwice(eth0), "delete interface/mv0")
	linkMustBeGone(t, tgt, "mv0")
	linkMustShow(t, tgt, "eth0")
}
