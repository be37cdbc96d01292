//go:build !vmtest

package netns_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/test/vm"
)

// vmNICs are the VM's emulated cards: two e1000, a virtio one and an e100
// (TestInVMEthtoolLinkWoL: of qemu's rtl8139, i82559c, vmxnet3, e1000e and
// e1000, only the e100 took both a forced speed/duplex and Wake-on), and two
// e1000 plugged in later: hot0 by TestInVMMatchHotAdded, hot1 by
// TestInVMDaemonMatchHotPlug.
var vmNICs = []vm.NIC{
	{ID: "nic0", Model: vm.ModelE1000, MAC: "52:54:00:00:01:10", Slot: 4},
	{ID: "nic1", Model: vm.ModelE1000, MAC: "52:54:00:00:01:11", Slot: 5},
	{ID: "nic2", Model: vm.ModelVirtio, MAC: "52:54:00:00:01:12", Slot: 6},
	{ID: "e100", Model: vm.ModelE100, MAC: "52:54:00:00:01:30", Slot: 10},
	{ID: "hot0", Model: vm.ModelE1000, MAC: "52:54:00:00:01:20", Slot: 8, Hot: true},
	{ID: "hot1", Model: vm.ModelE1000, MAC: "52:54:00:00:01:21", Slot: 9, Hot: true},
}

// TestVM boots a Debian kernel and runs this package's TestInVM tests in
// it: the link kinds this host's kernel lacks (bond, 802.1Q VLAN, dummy,
// bridge VLAN filtering), matching real NICs (vmNICs, read back with ip
// and ethtool; hot-added ones, one under the daemon: the netagent binary
// goes into the VM) and e1000, virtio and e100 ethtool settings. Then it boots again with nic0 and nic1 in each other's
// slots and runs TestInVMMatchNICs alone: the names found by permanentMac
// are on the same cards in both boots, in other slots; those found by
// path are in the same slots, on the other cards.
//
// NETAGENT_VM_RUN, if set, is the pattern of the in-VM tests to run
// instead (NETAGENT_VM_RUN='^TestInVMBridgeVLANTrunk$'), in one boot
// without the swapped one.
func TestVM(t *testing.T) {
	cfg := vmConfig(t)
	if only := os.Getenv("NETAGENT_VM_RUN"); only != "" {
		cfg.RunPackageTests(t, ".", []string{vm.Tag}, only)
		return
	}
	first := matchLines(cfg.RunPackageTests(t, ".", []string{vm.Tag}, vm.TestPattern))
	cfg.NICs, cfg.Binaries = vm.SwapSlots(vmNICs, 0, 1), nil // TestInVMMatchNICs runs no daemon
	swapped := matchLines(cfg.RunPackageTests(t, ".", []string{vm.Tag}, "^TestInVMMatchNICs$"))
	for name, follows := range map[string]string{"lan0": "card", "wan0": "card", "virt0": "card", "slot4": "slot", "slot5": "slot"} {
		a, b := first[name], swapped[name]
		sameMAC, samePCI := a[0] == b[0] && a[0] != "", a[1] == b[1] && a[1] != ""
		moved := name != "virt0" // nic2 keeps its slot
		if follows == "card" && (!sameMAC || samePCI == moved) || follows == "slot" && (!samePCI || sameMAC) {
			t.Errorf("%s (found by %s): first boot %q, swapped boot %q", name, follows, a, b)
		}
	}
}

// vmConfig is TestVM's VM: vmNICs, ip, ethtool, bridge (which
// TestInVMENIOracle reads bridge VLANs with) and ping (iputils', which
// TestInVMAdoptENI pings through with, as the host's adopt tests), the
// netagent binary, and
// the host's root shared read-only, where TestInVMENIOracle runs the
// host's python3 and ifupdown2, and TestInVMNetplanOracle netplan,
// systemd-networkd and dnsmasq.
func vmConfig(t *testing.T) vm.Config {
	return vm.Config{NICs: vmNICs, Programs: append(slices.Clone(vm.ProgramsIPEthtool), "bridge", "ping"), HostRoot: true,
		Binaries: []string{vm.BuildBinary(t, "github.com/netagent/netagent/cmd/netagent")}, Timeout: vmTimeout}
}

// vmTimeout bounds one boot's run: the first boot runs every TestInVM
// test under TCG (about 8 minutes on this 2-core machine while other
// tests run, the ENI and netplan oracles the longest), well above the
// harness's default.
const vmTimeout = 20 * time.Minute

var matchLine = regexp.MustCompile(`vm-match (\S+) (\S+) (\S+)`)

// matchLines collects the "vm-match <name> <MAC> <PCI address>" lines of
// a run: name -> [MAC, PCI address].
func matchLines(res vm.Result) map[string][2]string {
	got := map[string][2]string{}
	for _, line := range strings.Split(res.Output, "\n") {
		if m := matchLine.FindStringSubmatch(line); m != nil {
			got[m[1]] = [2]string{strings.ToLower(m[2]), m[3]}
		}
	}
	return got
}
