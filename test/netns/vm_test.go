//go:build !vmtest

package netns_test

import (
	"testing"

	"github.com/netagent/netagent/test/vm"
)

// TestVM boots a Debian kernel and runs this package's TestInVM tests in
// it: the link kinds this host's kernel lacks (bond, 802.1Q VLAN, dummy,
// bridge VLAN filtering).
func TestVM(t *testing.T) {
	vm.RunVMTests(t)
}
