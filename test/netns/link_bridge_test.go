package netns_test

import (
	"context"
	"testing"
	"time"

	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
)

// TestLinkBridge builds a bridge over two NICs (veth ends made by ip) with
// STP, a forward delay and a port cost; changes them in place; releases a
// port; and deletes the bridge, leaving the NICs.
func TestLinkBridge(t *testing.T) {
	tgt := testns.New(t)
	env := newLinkEnv(t, tgt)
	for _, nic := range []string{"eth1", "eth2"} {
		linkExec(t, tgt, "ip", "link", "add", nic, "type", "veth", "peer", "name", nic+"p")
	}
	eth1 := &items.Interface{IfName: "eth1", Kind: items.KindPhysical, AdminUp: true}
	eth2 := &items.Interface{IfName: "eth2", Kind: items.KindPhysical, AdminUp: true}
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true, MTU: 1400,
		Attrs: &items.BridgeAttrs{STP: true, ForwardDelay: 4 * time.Second}}
	p1 := &items.Port{IfName: "eth1", Master: "br0", MasterKind: items.KindBridge, Cost: 55}
	p2 := &items.Port{IfName: "eth2", Master: "br0", MasterKind: items.KindBridge}
	// The NICs exist, so their settings items are read back: they are
	// modified (set up), never created.
	linkWantOps(t, env.applyTwice(eth1, eth2, br, p1, p2), "modify interface/eth1",
		"modify interface/eth2", "create interface/br0", "create port/eth1", "create port/eth2")

	got := linkMustShow(t, tgt, "br0")
	if got.LinkInfo.InfoKind != "bridge" || got.MTU != 1400 || !got.up() || got.IfAlias != "netagent" ||
		got.LinkInfo.InfoData["stp_state"] != 1.0 || got.LinkInfo.InfoData["forward_delay"] != 400.0 {
		t.Errorf("ip link br0 = %+v", got)
	}
	port := linkMustShow(t, tgt, "eth1")
	if port.Master != "br0" || port.LinkInfo.InfoSlaveData["cost"] != 55.0 || !port.up() {
		t.Errorf("ip link eth1 = %+v", port)
	}
	if linkMustShow(t, tgt, "eth2").Master != "br0" {
		t.Errorf("eth2 not in br0")
	}

	// In place: STP off, another delay and cost; eth2 leaves the bridge.
	br2 := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true, MTU: 1400,
		Attrs: &items.BridgeAttrs{ForwardDelay: 10 * time.Second}}
	p1b := &items.Port{IfName: "eth1", Master: "br0", MasterKind: items.KindBridge, Cost: 77}
	linkWantOps(t, env.applyTwice(eth1, eth2, br2, p1b), "modify interface/br0",
		"modify port/eth1", "delete port/eth2")
	got = linkMustShow(t, tgt, "br0")
	if got.LinkInfo.InfoData["stp_state"] != 0.0 || got.LinkInfo.InfoData["forward_delay"] != 1000.0 {
		t.Errorf("after modify: ip link br0 = %+v", got.LinkInfo.InfoData)
	}
	if c := linkMustShow(t, tgt, "eth1").LinkInfo.InfoSlaveData["cost"]; c != 77.0 {
		t.Errorf("after modify: eth1 cost %v, want 77", c)
	}
	if m := linkMustShow(t, tgt, "eth2"); m.Master != "" || !m.up() {
		t.Errorf("released eth2 = %+v, want up and without master", m)
	}

	// Only the NICs stay intended: the bridge and its port go, the NICs stay.
	linkWantOps(t, env.applyTwice(eth1, eth2), "delete interface/br0", "delete port/eth1")
	linkMustBeGone(t, tgt, "br0")
	if m := linkMustShow(t, tgt, "eth1"); m.Master != "" || !m.up() {
		t.Errorf("eth1 after the bridge went = %+v", m)
	}
	// Deleting the physical interfaces gives them back what netagent
	// changed: they were down before it set them up.
	cfg := env.ifaces()
	for _, nic := range []*items.Interface{eth1, eth2} {
		if err := cfg.Delete(context.Background(), nic); err != nil {
			t.Errorf("deleting physical %s: %v", nic.IfName, err)
		}
	}
	if m := linkMustShow(t, tgt, "eth1"); m.up() || m.Master != "" {
		t.Errorf("eth1 after delete = %+v, want down as found, without master", m)
	}
}

// TestLinkBridgePortMove moves a port from one bridge to another (a modify,
// never a recreate).
func TestLinkBridgePortMove(t *testing.T) {
	tgt := testns.New(t)
	env := newLinkEnv(t, tgt)
	linkExec(t, tgt, "ip", "link", "add", "eth1", "type", "veth", "peer", "name", "eth1p")
	eth1 := &items.Interface{IfName: "eth1", Kind: items.KindPhysical, AdminUp: true}
	brA := &items.Interface{IfName: "brA", Kind: items.KindBridge, AdminUp: true}
	brB := &items.Interface{IfName: "brB", Kind: items.KindBridge, AdminUp: true}
	pA := &items.Port{IfName: "eth1", Master: "brA", MasterKind: items.KindBridge}
	pB := &items.Port{IfName: "eth1", Master: "brB", MasterKind: items.KindBridge}
	env.applyTwice(eth1, brA, brB, pA)
	linkWantOps(t, env.applyTwice(eth1, brA, brB, pB), "modify port/eth1")
	if m := linkMustShow(t, tgt, "eth1"); m.Master != "brB" {
		t.Errorf("eth1 master %q, want brB", m.Master)
	}
}
