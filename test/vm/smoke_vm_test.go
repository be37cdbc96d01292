//go:build vmtest

package vm_test

import (
	"runtime"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/test/vm"
)

// newNamespace gives the test a fresh network namespace and a netlink handle
// in it, and leaves the calling thread in the namespace it was in.
func newNamespace(t *testing.T) *netlink.Handle {
	t.Helper()
	runtime.LockOSThread() // namespaces belong to threads
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatalf("getting current netns: %v", err)
	}
	defer orig.Close()
	ns, err := netns.New() // also switches this thread into ns
	if err != nil {
		t.Fatalf("creating netns: %v", err)
	}
	t.Cleanup(func() { ns.Close() })
	if err := netns.Set(orig); err != nil {
		t.Fatalf("restoring netns %v: %v", orig, err)
	}
	// Route only: the VM has no xfrm or netfilter netlink to open sockets for.
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatalf("netlink handle in netns %v: %v", ns, err)
	}
	t.Cleanup(h.Close)
	return h
}

// TestInVMBondVLAN builds dummy0 -> bond0 (active-backup) -> bond0.100 and
// reads the three links back.
func TestInVMBondVLAN(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the harness's VM only: go test -run TestVMSmoke ./test/vm/")
	}
	h := newNamespace(t)
	bond := addBond(t, h)
	dummy := addEnslavedDummy(t, h, bond)
	vlan := addVLAN(t, h, bond)

	checkBond(t, h, bond.Name)
	checkSlave(t, h, dummy.Name, bond.Index)
	checkVLAN(t, h, vlan.Name, bond.Index)
}

func addBond(t *testing.T, h *netlink.Handle) *netlink.Bond {
	t.Helper()
	bond := netlink.NewLinkBond(netlink.LinkAttrs{Name: "bond0"})
	bond.Mode = netlink.BOND_MODE_ACTIVE_BACKUP
	bond.Miimon = 100
	if err := h.LinkAdd(bond); err != nil {
		t.Fatalf("adding bond %s: %v", bond.Name, err)
	}
	bond.Index = linkByName(t, h, bond.Name).Attrs().Index
	return bond
}

func addEnslavedDummy(t *testing.T, h *netlink.Handle, bond *netlink.Bond) *netlink.Dummy {
	t.Helper()
	dummy := &netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: "dummy0"}}
	if err := h.LinkAdd(dummy); err != nil {
		t.Fatalf("adding dummy %s: %v", dummy.Name, err)
	}
	if err := h.LinkSetDown(dummy); err != nil { // the kernel enslaves only down links
		t.Fatalf("setting %s down: %v", dummy.Name, err)
	}
	if err := h.LinkSetMaster(dummy, bond); err != nil {
		t.Fatalf("enslaving %s to %s: %v", dummy.Name, bond.Name, err)
	}
	return dummy
}

func addVLAN(t *testing.T, h *netlink.Handle, bond *netlink.Bond) *netlink.Vlan {
	t.Helper()
	vlan := &netlink.Vlan{
		LinkAttrs: netlink.LinkAttrs{Name: "bond0.100", ParentIndex: bond.Index},
		VlanId:    100,
	}
	if err := h.LinkAdd(vlan); err != nil {
		t.Fatalf("adding vlan %s: %v", vlan.Name, err)
	}
	return vlan
}

func linkByName(t *testing.T, h *netlink.Handle, name string) netlink.Link {
	t.Helper()
	link, err := h.LinkByName(name)
	if err != nil {
		t.Fatalf("reading link %s: %v", name, err)
	}
	return link
}

func checkBond(t *testing.T, h *netlink.Handle, name string) {
	t.Helper()
	bond, ok := linkByName(t, h, name).(*netlink.Bond)
	if !ok {
		t.Fatalf("link %s: got type %T, want *netlink.Bond", name, linkByName(t, h, name))
	}
	if bond.Mode != netlink.BOND_MODE_ACTIVE_BACKUP {
		t.Errorf("bond %s: mode %v, want active-backup", name, bond.Mode)
	}
	if bond.Miimon != 100 {
		t.Errorf("bond %s: miimon %d, want 100", name, bond.Miimon)
	}
}

func checkSlave(t *testing.T, h *netlink.Handle, name string, bondIndex int) {
	t.Helper()
	link := linkByName(t, h, name)
	if link.Type() != "dummy" {
		t.Errorf("link %s: type %q, want dummy", name, link.Type())
	}
	if got := link.Attrs().MasterIndex; got != bondIndex {
		t.Errorf("link %s: master index %d, want the bond's %d", name, got, bondIndex)
	}
	if _, ok := link.Attrs().Slave.(*netlink.BondSlave); !ok {
		t.Errorf("link %s: slave info %T, want *netlink.BondSlave", name, link.Attrs().Slave)
	}
}

func checkVLAN(t *testing.T, h *netlink.Handle, name string, parentIndex int) {
	t.Helper()
	vlan, ok := linkByName(t, h, name).(*netlink.Vlan)
	if !ok {
		t.Fatalf("link %s: got type %T, want *netlink.Vlan", name, linkByName(t, h, name))
	}
	if vlan.VlanId != 100 {
		t.Errorf("vlan %s: id %d, want 100", name, vlan.VlanId)
	}
	if vlan.ParentIndex != parentIndex {
		t.Errorf("vlan %s: parent index %d, want the bond's %d", name, vlan.ParentIndex, parentIndex)
	}
}
