//go:build vmtest

package netns_test

import (
	"context"
	"errors"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/items"
)

// TestInVMVLANOnDummy puts VLANs on a plain dummy NIC: create (802.1Q and
// 802.1ad), modify in place (MTU, alias, down), recreate on a new ID and a
// new parent, delete; a VLAN made by someone else is refused and left
// alone.
func TestInVMVLANOnDummy(t *testing.T) {
	tgt := linkVMNamespace(t)
	env := newLinkEnv(t, tgt)
	linkDummies(t, tgt, "eth0", "eth1")
	nics := linkNICs("eth0", "eth1")
	vlan := func(name, parent string, id uint16, proto string, mtu int, up bool) *items.Interface {
		return &items.Interface{IfName: name, Kind: items.KindVLAN, AdminUp: up, MTU: mtu,
			Attrs: &items.VLANAttrs{Parent: parent, ID: id, Protocol: proto}}
	}
	v10 := vlan("v10", "eth0", 10, "", 0, true)
	v20 := vlan("v20", "eth0", 20, "802.1ad", 1400, true)
	linkWantOps(t, env.applyTwice(nics[0], nics[1], v10, v20), "modify interface/eth0",
		"modify interface/eth1", "create interface/v10", "create interface/v20")
	linkCheckVLAN(t, tgt, "v10", "eth0", 10, netlink.VLAN_PROTOCOL_8021Q)
	linkCheckVLAN(t, tgt, "v20", "eth0", 20, netlink.VLAN_PROTOCOL_8021AD)
	if mtu := linkNL(t, tgt, "v20").Attrs().MTU; mtu != 1400 {
		t.Errorf("v20 mtu %d, want 1400", mtu)
	}

	// In place: MTU, alias, admin down.
	v10b := vlan("v10", "eth0", 10, "", 1300, false)
	v10b.Alias = "storage"
	linkWantOps(t, env.applyTwice(nics[0], nics[1], v10b, v20), "modify interface/v10")
	a := linkNL(t, tgt, "v10").Attrs()
	if a.MTU != 1300 || a.Flags&netlinkUp != 0 || a.Alias != "netagent:storage" {
		t.Errorf("v10 after modify: mtu %d flags %v alias %q", a.MTU, a.Flags, a.Alias)
	}

	// A new ID and a new parent are recreates.
	v10c := vlan("v10", "eth1", 11, "", 0, true)
	linkWantOps(t, env.applyTwice(nics[0], nics[1], v10c, v20), "delete interface/v10", "create interface/v10")
	linkCheckVLAN(t, tgt, "v10", "eth1", 11, netlink.VLAN_PROTOCOL_8021Q)

	// A VLAN someone else made: refused, then left alone by a delete-all.
	foreign := &netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: "v30", ParentIndex: linkNL(t, tgt, "eth0").Attrs().Index}, VlanId: 30}
	if err := tgt.NL.LinkAdd(foreign); err != nil {
		t.Fatalf("adding foreign vlan: %v", err)
	}
	st := env.tryApply(nics[0], nics[1], v10c, v20, vlan("v30", "eth0", 30, "", 0, true))
	if !errors.Is(st.Err, link.ErrNotOwned) {
		t.Errorf("managing foreign v30: %v, want ErrNotOwned", st.Err)
	}
	if err := env.ifaces().Delete(context.Background(), vlan("v30", "eth0", 30, "", 0, true)); !errors.Is(err, link.ErrNotOwned) {
		t.Errorf("deleting foreign v30: %v, want ErrNotOwned", err)
	}

	linkWantOps(t, env.applyTwice(nics[0], nics[1]), "delete interface/v10", "delete interface/v20")
	if !linkGone(t, tgt, "v10") || !linkGone(t, tgt, "v20") {
		t.Errorf("netagent's VLANs still exist")
	}
	if linkGone(t, tgt, "v30") || linkGone(t, tgt, "eth0") {
		t.Errorf("the foreign VLAN or the NIC went")
	}
}

// TestInVMBondOptions changes a bond's options in place (no recreate):
// miimon, min_links, xmit_hash_policy, and an 802.3ad bond's lacp_rate,
// which the kernel takes only while the bond is down.
func TestInVMBondOptions(t *testing.T) {
	tgt := linkVMNamespace(t)
	env := newLinkEnv(t, tgt)
	linkDummies(t, tgt, "d0")
	nic := linkNICs("d0")[0]
	bond := func(attrs items.BondAttrs) *items.Interface {
		return &items.Interface{IfName: "bond1", Kind: items.KindBond, AdminUp: true, Attrs: &attrs}
	}
	port := linkBondPort("d0", "bond1")
	xor := items.BondAttrs{Mode: "balance-xor", Miimon: 50, MinLinks: 1, XmitHashPolicy: "layer2+3"}
	env.applyTwice(nic, bond(xor), port)
	xor2 := items.BondAttrs{Mode: "balance-xor", Miimon: 200, MinLinks: 2, XmitHashPolicy: "layer3+4"}
	linkWantOps(t, env.applyTwice(nic, bond(xor2), port), "modify interface/bond1")
	b := linkBondOf(t, tgt, "bond1")
	if b.Miimon != 200 || b.MinLinks != 2 || b.XmitHashPolicy != netlink.BOND_XMIT_HASH_POLICY_LAYER3_4 {
		t.Errorf("bond1 = miimon %d min_links %d xmit %v", b.Miimon, b.MinLinks, b.XmitHashPolicy)
	}

	// Unset options are left as they are, and read back unset: nothing to do.
	linkWantOps(t, env.applyTwice(nic, bond(items.BondAttrs{Mode: "balance-xor"}), port))
	if b := linkBondOf(t, tgt, "bond1"); b.Miimon != 200 {
		t.Errorf("bond1 miimon %d after it was left unset, want 200 kept", b.Miimon)
	}

	lacp := items.BondAttrs{Mode: "802.3ad", LacpRate: "slow"}
	env.applyTwice(nic, bond(lacp), port)
	lacp.LacpRate = "fast"
	linkWantOps(t, env.applyTwice(nic, bond(lacp), port), "modify interface/bond1")
	b = linkBondOf(t, tgt, "bond1")
	if b.LacpRate != netlink.BOND_LACP_RATE_FAST || b.Flags&netlinkUp == 0 {
		t.Errorf("bond1 = lacp %v flags %v, want fast and up", b.LacpRate, b.Flags)
	}
	linkCheckPorts(t, tgt, "bond1", []string{"d0"}, nil)
}

// TestInVMBridgeVLANFiltering turns a bridge's VLAN filtering on and off in
// place (the host's kernel lacks it).
func TestInVMBridgeVLANFiltering(t *testing.T) {
	tgt := linkVMNamespace(t)
	env := newLinkEnv(t, tgt)
	br := func(filtering bool) *items.Interface {
		return &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true,
			Attrs: &items.BridgeAttrs{VLANFiltering: filtering}}
	}
	linkWantOps(t, env.applyTwice(br(true)), "create interface/br0")
	if f := linkNL(t, tgt, "br0").(*netlink.Bridge).VlanFiltering; f == nil || !*f {
		t.Errorf("br0 vlan filtering %v, want on", f)
	}
	linkWantOps(t, env.applyTwice(br(false)), "modify interface/br0")
	if f := linkNL(t, tgt, "br0").(*netlink.Bridge).VlanFiltering; f == nil || *f {
		t.Errorf("br0 vlan filtering %v, want off", f)
	}
}
