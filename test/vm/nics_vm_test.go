//go:build vmtest

package vm_test

import (
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/test/vm"
)

// guestNICs returns the NICs of this boot: those present from the start
// (hot == false) or the hot-pluggable ones (hot == true).
func guestNICs(t *testing.T, hot bool) []vm.NIC {
	t.Helper()
	if !vm.InGuest() {
		t.Fatal("this test runs in the harness's VM only: go test -run 'TestVMSmoke|TestVMNICs' ./test/vm/")
	}
	all, err := vm.GuestNICs()
	if err != nil {
		t.Fatal(err)
	}
	var nics []vm.NIC
	for _, n := range all {
		if n.Hot == hot {
			nics = append(nics, n)
		}
	}
	if len(nics) == 0 {
		t.Fatalf("the harness gave the VM no NICs with Hot=%v: %+v", hot, all)
	}
	return nics
}

// linkWithAddress finds the one link of links whose current address is mac.
func linkWithAddress(t *testing.T, links []vm.IPLink, mac string) vm.IPLink {
	t.Helper()
	var found []vm.IPLink
	for _, l := range links {
		if strings.EqualFold(l.Address, mac) {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Fatalf("ip -d -j link: %d links with address %s, want 1: %+v", len(found), mac, links)
	}
	return found[0]
}

// checkNIC reads one NIC back with ip, sysfs and ethtool: its link has the
// NIC's MAC, sits on the NIC's PCI function, and is bound by its driver.
func checkNIC(t *testing.T, links []vm.IPLink, n vm.NIC) vm.IPLink {
	t.Helper()
	l := linkWithAddress(t, links, n.MAC)
	if l.LinkType != "ether" || l.Permaddr != "" {
		t.Errorf("NIC %s: link %s: link_type %q, permaddr %q; want ether and none (the address is the permanent one)",
			n.ID, l.Ifname, l.LinkType, l.Permaddr)
	}
	if pci, err := vm.SysfsPCIAddress(l.Ifname); err != nil || pci != n.PCIAddress() {
		t.Errorf("NIC %s: link %s: sysfs PCI address %q (%v), want %s (path %s)", n.ID, l.Ifname, pci, err, n.PCIAddress(), n.Path())
	}
	if info := vm.Ethtool(t, "", l.Ifname); info.Driver != n.Driver() || info.BusInfo != n.PCIAddress() {
		t.Errorf("NIC %s: ethtool -i %s: driver %q bus-info %q, want %s %s", n.ID, l.Ifname, info.Driver, info.BusInfo, n.Driver(), n.PCIAddress())
	}
	if got := vm.PermanentAddress(t, "", l.Ifname); !strings.EqualFold(got, n.MAC) {
		t.Errorf("NIC %s: ethtool -P %s: %s, want %s", n.ID, l.Ifname, got, n.MAC)
	}
	t.Logf("NIC %s: %s %s at %s, driver %s (ip parentbus %s parentdev %s)",
		n.ID, l.Ifname, l.Address, n.Path(), n.Driver(), l.ParentBus, l.ParentDev)
	return l
}

// TestInVMNICs reads every NIC present at boot back with ip -d -j link,
// sysfs and ethtool: the MAC, the PCI address of the slot it was given,
// the driver; and no other Ethernet link sits on a device. The swapped
// boot (TestVMNICsSwapped) runs it with the cards in each other's slots.
func TestInVMNICs(t *testing.T) {
	nics := guestNICs(t, false)
	links := vm.IPLinks(t, "")
	for _, n := range nics {
		checkNIC(t, links, n)
	}
	var onDevices []string
	for _, l := range links {
		if l.ParentDev != "" {
			onDevices = append(onDevices, l.Ifname)
		}
	}
	if len(onDevices) != len(nics) {
		t.Errorf("links on a device: %q, want one per NIC (%d)", onDevices, len(nics))
	}
}

// moveNIC moves the NIC into a fresh test namespace for the test; it
// returns the namespace's name and the link's.
func moveNIC(t *testing.T, n vm.NIC) (string, string) {
	t.Helper()
	ns := testns.New(t).Name
	return ns, vm.MoveNIC(t, n, ns)
}

// TestInVMNICsKeepPermaddr moves each NIC into a test namespace and gives
// it another address: ip shows the card's MAC as permaddr and ethtool -P
// still reports it, as do the driver and bus-info, which matching by
// permanentMac, driver and path read.
func TestInVMNICsKeepPermaddr(t *testing.T) {
	for _, n := range guestNICs(t, false) {
		ns, dev := moveNIC(t, n)
		vm.GuestRun(t, "", "ip", "-n", ns, "link", "set", "dev", dev, "address", "02:00:00:00:00:99")
		l := linkWithAddress(t, vm.IPLinks(t, ns), "02:00:00:00:00:99")
		if !strings.EqualFold(l.Permaddr, n.MAC) {
			t.Errorf("NIC %s: ip -n %s -d -j link: %s permaddr %q, want %s", n.ID, ns, dev, l.Permaddr, n.MAC)
		}
		if got := vm.PermanentAddress(t, ns, dev); !strings.EqualFold(got, n.MAC) {
			t.Errorf("NIC %s: ethtool -P %s in %s: %s, want %s", n.ID, dev, ns, got, n.MAC)
		}
		if info := vm.Ethtool(t, ns, dev); info.Driver != n.Driver() || info.BusInfo != n.PCIAddress() {
			t.Errorf("NIC %s: ethtool -i %s in %s: driver %q bus-info %q, want %s %s", n.ID, dev, ns, info.Driver, info.BusInfo, n.Driver(), n.PCIAddress())
		}
		vm.GuestRun(t, "", "ip", "-n", ns, "link", "set", "dev", dev, "address", n.MAC)
	}
}

// TestInVMNICsShareAHub puts two NICs into two namespaces and pings across:
// the NICs' netdevs are ports of one hub, a wire between them (and nothing
// else: there is no other port).
func TestInVMNICsShareAHub(t *testing.T) {
	nics := guestNICs(t, false)
	if len(nics) < 2 {
		t.Fatalf("want two NICs at boot, have %d", len(nics))
	}
	var ns [2]string
	for i, addr := range []string{"192.0.2.1/24", "192.0.2.2/24"} {
		var dev string
		ns[i], dev = moveNIC(t, nics[i])
		vm.GuestRun(t, "", "ip", "-n", ns[i], "addr", "add", addr, "dev", dev)
		vm.GuestRun(t, "", "ip", "-n", ns[i], "link", "set", "dev", dev, "up")
	}
	// -w: keep trying until a reply comes or 20 s pass (the e1000 reports
	// carrier a moment after the link goes up).
	vm.GuestRun(t, ns[0], "ping", "-c", "1", "-w", "20", "192.0.2.2")
}

// TestInVMHotAdd asks the harness to plug each hot NIC in through qemu's
// monitor, and reads the new link back like the NICs present at boot.
func TestInVMHotAdd(t *testing.T) {
	for _, n := range guestNICs(t, true) {
		if name, err := vm.LinkWithMAC(n.MAC); err != nil || name != "" {
			t.Fatalf("NIC %s is there before the hot-add: %q (%v)", n.ID, name, err)
		}
		name := vm.HotAdd(t, n.ID)
		if l := checkNIC(t, vm.IPLinks(t, ""), n); l.Ifname != name {
			t.Errorf("NIC %s: ip names it %s, sysfs %s", n.ID, l.Ifname, name)
		}
	}
}
