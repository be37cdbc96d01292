package netns_test

import (
	"context"
	"errors"
	"testing"

	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
)

// TestLinkBridgePortCostPriority sets a bridge port's STP cost and
// priority (0 included), changes them in place, leaves them as the kernel
// holds them once unset, and never touches the port of a foreign bridge.
// Checked with `ip -j -d link`.
func TestLinkBridgePortCostPriority(t *testing.T) {
	tgt := testns.New(t)
	env := newLinkEnv(t, tgt)
	for _, nic := range []string{"eth1", "eth2"} {
		linkExec(t, tgt, "ip", "link", "add", nic, "type", "veth", "peer", "name", nic+"p")
	}
	linkExec(t, tgt, "ip", "link", "add", "docker0", "type", "bridge")
	linkExec(t, tgt, "ip", "link", "set", "eth2", "master", "docker0")
	linkExec(t, tgt, "ip", "link", "set", "eth2", "type", "bridge_slave", "cost", "9", "priority", "9")
	prio := func(p uint16) *uint16 { return &p }
	eth1 := &items.Interface{IfName: "eth1", Kind: items.KindPhysical, AdminUp: true}
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true}
	port := func(cost uint32, p *uint16) *items.Port {
		return &items.Port{IfName: "eth1", Master: "br0", MasterKind: items.KindBridge, Cost: cost, Priority: p}
	}
	slave := func() (cost, priority any) {
		d := linkMustShow(t, tgt, "eth1").LinkInfo.InfoSlaveData
		return d["cost"], d["priority"]
	}
	linkWantOps(t, env.applyTwice(eth1, br, port(100, prio(0))), "modify interface/eth1",
		"create interface/br0", "create port/eth1")
	if c, p := slave(); c != 100.0 || p != 0.0 {
		t.Errorf("eth1 cost %v priority %v, want 100 and 0", c, p)
	}
	linkWantOps(t, env.applyTwice(eth1, br, port(65535, prio(63))), "modify port/eth1")
	if c, p := slave(); c != 65535.0 || p != 63.0 {
		t.Errorf("eth1 cost %v priority %v, want 65535 and 63", c, p)
	}
	// Unset: left as the kernel holds them.
	linkWantOps(t, env.applyTwice(eth1, br, port(0, nil)))
	if c, p := slave(); c != 65535.0 || p != 63.0 {
		t.Errorf("eth1 after unsetting: cost %v priority %v, want them kept", c, p)
	}

	// The port of a foreign bridge: never enslaved away, never written.
	foreign := &items.Port{IfName: "eth2", Master: "docker0", MasterKind: items.KindBridge, Cost: 5, Priority: prio(5)}
	pc := link.NewPortConfigurator(tgt)
	if err := pc.Create(context.Background(), foreign); !errors.Is(err, link.ErrNotOwned) {
		t.Errorf("setting a foreign bridge's port: %v, want ErrNotOwned", err)
	}
	if err := pc.Delete(context.Background(), foreign); !errors.Is(err, link.ErrNotOwned) {
		t.Errorf("releasing a foreign bridge's port: %v, want ErrNotOwned", err)
	}
	d := linkMustShow(t, tgt, "eth2")
	if d.Master != "docker0" || d.LinkInfo.InfoSlaveData["cost"] != 9.0 || d.LinkInfo.InfoSlaveData["priority"] != 9.0 {
		t.Errorf("foreign port eth2 = %+v", d)
	}
	linkWantOps(t, env.applyTwice(eth1), "delete interface/br0", "delete port/eth1")
}
