//go:build vmtest

package netns_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// linkVLANsOf reads a bridge member's VLANs through netlink (`bridge vlan
// show`), canonical.
func linkVLANsOf(t *testing.T, tgt *netnsx.Target, name string) items.VLANSet {
	t.Helper()
	all, err := tgt.NL.BridgeVlanList()
	if err != nil {
		t.Fatalf("bridge vlan list: %v", err)
	}
	m := map[uint16]items.VLANFlags{}
	for _, v := range all[int32(linkNL(t, tgt, name).Attrs().Index)] {
		m[v.Vid] = items.VLANFlags{PVID: v.PortVID(), Untagged: v.EngressUntag()}
	}
	return items.CanonicalVLANs(m)
}

func linkWantVLANs(t *testing.T, tgt *netnsx.Target, name string, want items.VLANSet) {
	t.Helper()
	if got := linkVLANsOf(t, tgt, name); !slices.Equal(got, want) {
		t.Errorf("vlans of %s: %s, want %s", name, got, want)
	}
}

// TestInVMBridgeVLANs: a filtering bridge's own VLANs and its ports' are
// created, changed in place (the pvid moves, VLANs come and go, cost and
// priority change), given back the kernel's default when their section
// goes, and dropped with a port that leaves; every step converges in one
// apply, the second runs nothing and read-back equals the intent. A
// foreign bridge's VLANs, and those of its port, are never touched. (The
// host's kernel lacks CONFIG_BRIDGE_VLAN_FILTERING.)
func TestInVMBridgeVLANs(t *testing.T) {
	tgt := linkVMNamespace(t)
	env := newLinkEnv(t, tgt)
	linkDummies(t, tgt, "eth0", "eth1", "eth2")
	nics := linkNICs("eth0", "eth1")
	// A foreign bridge with a port of its own VLANs.
	filtering := true
	if err := tgt.NL.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "docker0"}, VlanFiltering: &filtering}); err != nil {
		t.Fatal(err)
	}
	if err := tgt.NL.LinkSetMaster(linkNL(t, tgt, "eth2"), linkNL(t, tgt, "docker0")); err != nil {
		t.Fatal(err)
	}
	if err := tgt.NL.BridgeVlanAdd(linkNL(t, tgt, "eth2"), 77, true, false, false, true); err != nil {
		t.Fatal(err)
	}
	foreignBefore := linkVLANsOf(t, tgt, "eth2")

	prio := func(p uint16) *uint16 { return &p }
	rng := func(from, to uint16, pvid, untagged bool) items.VLANRange {
		return items.VLANRange{From: from, To: to, PVID: pvid, Untagged: untagged}
	}
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true, Attrs: &items.BridgeAttrs{VLANFiltering: true}}
	p0 := &items.Port{IfName: "eth0", Master: "br0", MasterKind: items.KindBridge, Cost: 100, Priority: prio(5)}
	p1 := &items.Port{IfName: "eth1", Master: "br0", MasterKind: items.KindBridge}
	self := &items.BridgeVLANs{IfName: "br0", Bridge: "br0", VLANs: items.VLANSet{rng(10, 10, true, true)}}
	v0 := &items.BridgeVLANs{IfName: "eth0", Bridge: "br0",
		VLANs: items.VLANSet{rng(10, 10, true, true), rng(20, 30, false, false), rng(40, 40, false, true)}}
	linkWantOps(t, env.applyTwice(nics[0], nics[1], br, p0, p1, self, v0), "modify interface/eth0", "modify interface/eth1",
		"create interface/br0", "create port/eth0", "create port/eth1", "create bridge-vlans/br0", "create bridge-vlans/eth0")
	linkWantVLANs(t, tgt, "br0", self.VLANs)
	linkWantVLANs(t, tgt, "eth0", v0.VLANs)
	linkWantVLANs(t, tgt, "eth1", items.DefaultVLANs(1))

	// In place: the pvid moves to 20, 25-30 and 40 go, 50 comes; cost and
	// priority change.
	v0b := &items.BridgeVLANs{IfName: "eth0", Bridge: "br0",
		VLANs: items.VLANSet{rng(10, 10, false, false), rng(20, 20, true, true), rng(21, 24, false, false), rng(50, 50, false, false)}}
	p0b := &items.Port{IfName: "eth0", Master: "br0", MasterKind: items.KindBridge, Cost: 7, Priority: prio(0)}
	linkWantOps(t, env.applyTwice(nics[0], nics[1], br, p0b, p1, self, v0b), "modify bridge-vlans/eth0", "modify port/eth0")
	linkWantVLANs(t, tgt, "eth0", v0b.VLANs)

	// Someone adds a VLAN to eth1, which declares none: the next apply
	// gives it back the default.
	if err := tgt.NL.BridgeVlanAdd(linkNL(t, tgt, "eth1"), 99, false, false, false, true); err != nil {
		t.Fatal(err)
	}
	linkWantOps(t, env.applyTwice(nics[0], nics[1], br, p0b, p1, self, v0b), "delete bridge-vlans/eth1")
	linkWantVLANs(t, tgt, "eth1", items.DefaultVLANs(1))

	// The sections go: the kernel's default comes back.
	linkWantOps(t, env.applyTwice(nics[0], nics[1], br, p0b, p1), "delete bridge-vlans/eth0", "delete bridge-vlans/br0")
	linkWantVLANs(t, tgt, "eth0", items.DefaultVLANs(1))
	linkWantVLANs(t, tgt, "br0", items.DefaultVLANs(1))

	// The empty set (read back as the default membership it differs from:
	// a modify), then the port leaves the bridge.
	none := &items.BridgeVLANs{IfName: "eth0", Bridge: "br0", VLANs: items.VLANSet{}}
	linkWantOps(t, env.applyTwice(nics[0], nics[1], br, p0b, p1, none), "modify bridge-vlans/eth0")
	linkWantVLANs(t, tgt, "eth0", nil)
	linkWantOps(t, env.applyTwice(nics[0], nics[1], br, p1), "delete bridge-vlans/eth0", "delete port/eth0")
	if linkNL(t, tgt, "eth0").Attrs().MasterIndex != 0 {
		t.Error("eth0 still a port")
	}

	// The foreign bridge: refused, and untouched all along.
	c := link.NewBridgeVLANConfigurator(tgt)
	foreign := &items.BridgeVLANs{IfName: "eth2", Bridge: "docker0", VLANs: items.VLANSet{rng(5, 5, false, false)}}
	if err := c.Create(context.Background(), foreign); !errors.Is(err, link.ErrNotOwned) {
		t.Errorf("vlans of a foreign bridge's port: %v, want ErrNotOwned", err)
	}
	if err := c.Delete(context.Background(), foreign); !errors.Is(err, link.ErrNotOwned) {
		t.Errorf("deleting vlans of a foreign bridge's port: %v, want ErrNotOwned", err)
	}
	linkWantVLANs(t, tgt, "eth2", foreignBefore)
	linkWantOps(t, env.applyTwice(nics[0], nics[1]), "delete port/eth1", "delete interface/br0")
	linkWantVLANs(t, tgt, "eth2", foreignBefore)
}
