//go:build vmtest

package netns_test

import (
	"testing"

	"github.com/vishvananda/netlink"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/netagent/netagent/test/vm"
)

// linkVMNamespace is testns.New for the VM, which it insists on.
func linkVMNamespace(t *testing.T) *netnsx.Target {
	t.Helper()
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVM$' ./test/netns/")
	}
	return testns.New(t)
}

// linkDummies adds dummy links with netlink directly (not through
// netagent): they play NICs.
func linkDummies(t *testing.T, tgt *netnsx.Target, names ...string) {
	t.Helper()
	for _, name := range names {
		if err := tgt.NL.LinkAdd(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: name}}); err != nil {
			t.Fatalf("adding dummy %s: %v", name, err)
		}
	}
}

func linkNICs(names ...string) []*items.Interface {
	var out []*items.Interface
	for _, n := range names {
		out = append(out, &items.Interface{IfName: n, Kind: items.KindPhysical, AdminUp: true})
	}
	return out
}

func linkBondPort(name, bond string) *items.Port {
	return &items.Port{IfName: name, Master: bond, MasterKind: items.KindBond}
}

// linkBondOf reads a bond back through netlink.
func linkBondOf(t *testing.T, tgt *netnsx.Target, name string) *netlink.Bond {
	t.Helper()
	b, ok := linkNL(t, tgt, name).(*netlink.Bond)
	if !ok {
		t.Fatalf("%s is %T, want a bond", name, linkNL(t, tgt, name))
	}
	return b
}

// linkCheckPorts checks which links are enslaved to the bond, and that the
// ports are up.
func linkCheckPorts(t *testing.T, tgt *netnsx.Target, bond string, in, out []string) {
	t.Helper()
	idx := linkNL(t, tgt, bond).Attrs().Index
	for _, p := range in {
		a := linkNL(t, tgt, p).Attrs()
		if a.MasterIndex != idx || a.Flags&netlinkUp == 0 {
			t.Errorf("%s: master index %d (want %s's %d), flags %v (want up)", p, a.MasterIndex, bond, idx, a.Flags)
		}
	}
	for _, p := range out {
		if a := linkNL(t, tgt, p).Attrs(); a.MasterIndex != 0 || a.Flags&netlinkUp == 0 {
			t.Errorf("%s: master index %d, flags %v; want no master and up", p, a.MasterIndex, a.Flags)
		}
	}
}

// TestInVMBondVLAN drives a bond over two dummy NICs with a VLAN on top
// through the reconciler: create; a port swap; a primary change in place;
// a mode change, which recreates the bond and, in cascade, its ports and
// the VLAN; and delete, which leaves the NICs.
func TestInVMBondVLAN(t *testing.T) {
	tgt := linkVMNamespace(t)
	env := newLinkEnv(t, tgt)
	linkDummies(t, tgt, "d0", "d1", "d2")
	nics := linkNICs("d0", "d1", "d2")
	bond := func(attrs items.BondAttrs) *items.Interface {
		return &items.Interface{IfName: "bond0", Kind: items.KindBond, AdminUp: true, MTU: 1500, Attrs: &attrs}
	}
	vlan := &items.Interface{IfName: "bond0.100", Kind: items.KindVLAN, AdminUp: true,
		Attrs: &items.VLANAttrs{Parent: "bond0", ID: 100}}
	ab := items.BondAttrs{Mode: "active-backup", Miimon: 100, Primary: "d0", MinLinks: 1}
	all := func(b *items.Interface, ports ...string) []dg.Item {
		out := []dg.Item{nics[0], nics[1], nics[2], b, vlan}
		for _, p := range ports {
			out = append(out, linkBondPort(p, "bond0"))
		}
		return out
	}

	log := env.applyTwice(all(bond(ab), "d0", "d1")...)
	linkWantOps(t, log, "modify interface/d0", "modify interface/d1", "modify interface/d2",
		"create interface/bond0", "create port/d0", "create port/d1", "create interface/bond0.100")
	b := linkBondOf(t, tgt, "bond0")
	if b.Mode != netlink.BOND_MODE_ACTIVE_BACKUP || b.Miimon != 100 || b.MinLinks != 1 ||
		b.Primary != linkNL(t, tgt, "d0").Attrs().Index || b.Alias != "netagent" {
		t.Errorf("bond0 = mode %v miimon %d min_links %d primary %d alias %q", b.Mode, b.Miimon, b.MinLinks, b.Primary, b.Alias)
	}
	linkCheckPorts(t, tgt, "bond0", []string{"d0", "d1"}, []string{"d2"})
	linkCheckVLAN(t, tgt, "bond0.100", "bond0", 100, netlink.VLAN_PROTOCOL_8021Q)

	// Port swap: d1 leaves (and stays up), d2 joins.
	linkWantOps(t, env.applyTwice(all(bond(ab), "d0", "d2")...), "delete port/d1", "create port/d2")
	linkCheckPorts(t, tgt, "bond0", []string{"d0", "d2"}, []string{"d1"})

	// Primary change: in place.
	ab2 := ab
	ab2.Primary = "d2"
	linkWantOps(t, env.applyTwice(all(bond(ab2), "d0", "d2")...), "modify interface/bond0")
	if p := linkBondOf(t, tgt, "bond0").Primary; p != linkNL(t, tgt, "d2").Attrs().Index {
		t.Errorf("bond0 primary index %d, want d2's", p)
	}

	// Mode change: the kernel refuses it with ports, so the bond is
	// recreated, and with it its ports and the VLAN on top.
	oldIndex := linkNL(t, tgt, "bond0").Attrs().Index
	lacp := items.BondAttrs{Mode: "802.3ad", Miimon: 100, LacpRate: "fast", XmitHashPolicy: "layer3+4"}
	log = env.applyTwice(all(bond(lacp), "d0", "d2")...)
	linkWantOps(t, log, "delete interface/bond0", "create interface/bond0",
		"delete port/d0", "create port/d0", "delete port/d2", "create port/d2",
		"delete interface/bond0.100", "create interface/bond0.100")
	linkCheckRecreate(t, log)
	b = linkBondOf(t, tgt, "bond0")
	if b.Index == oldIndex || b.Mode != netlink.BOND_MODE_802_3AD || b.LacpRate != netlink.BOND_LACP_RATE_FAST ||
		b.XmitHashPolicy != netlink.BOND_XMIT_HASH_POLICY_LAYER3_4 {
		t.Errorf("bond0 after mode change: index %d (old %d) mode %v lacp %v xmit %v",
			b.Index, oldIndex, b.Mode, b.LacpRate, b.XmitHashPolicy)
	}
	linkCheckPorts(t, tgt, "bond0", []string{"d0", "d2"}, []string{"d1"})
	linkCheckVLAN(t, tgt, "bond0.100", "bond0", 100, netlink.VLAN_PROTOCOL_8021Q)

	// Only the NICs stay: the bond, its ports and the VLAN go.
	log = env.applyTwice(nics[0], nics[1], nics[2])
	linkWantOps(t, log, "delete interface/bond0", "delete port/d0", "delete port/d2", "delete interface/bond0.100")
	for _, gone := range []string{"bond0", "bond0.100"} {
		if !linkGone(t, tgt, gone) {
			t.Errorf("%s still exists", gone)
		}
	}
	for _, nic := range []string{"d0", "d1", "d2"} {
		if a := linkNL(t, tgt, nic).Attrs(); a.MasterIndex != 0 || a.Flags&netlinkUp == 0 {
			t.Errorf("%s after delete: master %d flags %v, want free and up", nic, a.MasterIndex, a.Flags)
		}
	}
}

// linkCheckRecreate checks that the log marks every operation of a
// recreate cascade as such.
func linkCheckRecreate(t *testing.T, log reconciler.OperationLog) {
	t.Helper()
	for _, e := range log {
		if !e.Recreate {
			t.Errorf("%s %s not marked as part of the recreate", e.Op, e.Ref)
		}
	}
}

// linkCheckVLAN checks a VLAN link through netlink.
func linkCheckVLAN(t *testing.T, tgt *netnsx.Target, name, parent string, id int, proto netlink.VlanProtocol) {
	t.Helper()
	v, ok := linkNL(t, tgt, name).(*netlink.Vlan)
	if !ok {
		t.Fatalf("%s is not a vlan", name)
	}
	if v.ParentIndex != linkNL(t, tgt, parent).Attrs().Index || v.VlanId != id || v.VlanProtocol != proto ||
		v.Flags&netlinkUp == 0 {
		t.Errorf("%s: parent index %d (want %s), id %d (want %d), protocol %v (want %v), flags %v",
			name, v.ParentIndex, parent, v.VlanId, id, v.VlanProtocol, proto, v.Flags)
	}
}
