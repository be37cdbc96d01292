//go:build !vmtest

package vm_test

import (
	"testing"

	"github.com/netagent/netagent/test/vm"
)

// TestVMSmoke boots the VM and runs this package's in-VM tests
// (smoke_vm_test.go) there: a bond, a dummy slave and a VLAN on the bond.
func TestVMSmoke(t *testing.T) {
	vm.RunVMTests(t)
}
