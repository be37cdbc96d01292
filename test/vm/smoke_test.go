//go:build !vmtest

package vm_test

import (
	"testing"

	"github.com/netagent/netagent/test/vm"
)

// smokeNICs are two e1000 cards and a virtio one at boot, and an e1000 to
// hot-add.
var smokeNICs = []vm.NIC{
	{ID: "nic0", Model: vm.ModelE1000, MAC: "52:54:00:00:00:10", Slot: 4},
	{ID: "nic1", Model: vm.ModelE1000, MAC: "52:54:00:00:00:11", Slot: 5},
	{ID: "nic2", Model: vm.ModelVirtio, MAC: "52:54:00:00:00:12", Slot: 6},
	{ID: "hot0", Model: vm.ModelE1000, MAC: "52:54:00:00:00:20", Slot: 8, Hot: true},
}

// TestVMSmoke boots the VM with smokeNICs, ip and ethtool, and runs this
// package's in-VM tests there: a bond, a dummy slave and a VLAN on the bond
// (smoke_vm_test.go); the NICs read back, moved into namespaces, pinging
// each other across the hub, and the hot-added one (nics_vm_test.go).
func TestVMSmoke(t *testing.T) {
	vm.Config{NICs: smokeNICs, Programs: vm.ProgramsIPEthtool}.RunPackageTests(t, ".", []string{vm.Tag}, vm.TestPattern)
}

// TestVMNICsSwapped boots again with nic0 (e1000) and nic2 (virtio) in each
// other's slots: TestInVMNICs finds each card's MAC and driver in the
// other slot.
func TestVMNICsSwapped(t *testing.T) {
	swapped := vm.SwapSlots(smokeNICs, 0, 2)
	vm.Config{NICs: swapped, Programs: vm.ProgramsIPEthtool}.RunPackageTests(t, ".", []string{vm.Tag}, "^TestInVMNICs$")
}
