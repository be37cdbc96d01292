//go:build !vmtest

package netns_test

import (
	"testing"

	"github.com/netagent/netagent/test/vm"
)

// linkVMModules are the VM's default modules plus the netlink families
// that netlink.NewHandleAt opens besides rtnetlink (xfrm and netfilter):
// without them netnsx.Open, and so testns.New, fails inside the VM.
var linkVMModules = append(append([]vm.Module(nil), vm.DefaultModules...),
	vm.Module{Name: "xfrm_user"}, vm.Module{Name: "nfnetlink"})

// TestVM boots a Debian kernel and runs this package's TestInVM tests in
// it: the link kinds this host's kernel lacks (bond, 802.1Q VLAN, dummy,
// bridge VLAN filtering).
func TestVM(t *testing.T) {
	vm.Config{Modules: linkVMModules}.RunPackageTests(t, ".", []string{vm.Tag}, vm.TestPattern)
}
