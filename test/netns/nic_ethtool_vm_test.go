//go:build vmtest

package netns_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/test/vm"
)

// ethtoolReads are the ethtool views of the settings TestInVMEthtoolE1000
// changes: rings (-g) and pause (-a). The e1000 driver has no interrupt
// coalescing (ethtool -c: "Operation not supported") nor, on qemu's
// card, Wake-on-LAN.
var ethtoolReads = [][]string{{"-g"}, {"-a"}}

// ethtoolSnapshot returns, per view, what ethtool prints for dev in ns,
// the link's name in the headings replaced by DEV.
func ethtoolSnapshot(t *testing.T, ns, dev string) []string {
	t.Helper()
	var out []string
	for _, args := range ethtoolReads {
		out = append(out, strings.ReplaceAll(vm.GuestRun(t, ns, "ethtool", append(args, dev)...), dev, "DEV"))
	}
	return out
}

// settledSnapshot brings dev up in ns and returns its ethtoolSnapshot once
// two reads half a second apart agree: with pause autonegotiation on, what
// `ethtool -a` shows is what the link negotiated, which changes for a while
// after the link comes up (or is reset by a pause or ring change).
func settledSnapshot(t *testing.T, ns, dev string) []string {
	t.Helper()
	vm.GuestRun(t, ns, "ip", "link", "set", "dev", dev, "up")
	last := ethtoolSnapshot(t, ns, dev)
	for range 20 {
		time.Sleep(500 * time.Millisecond)
		cur := ethtoolSnapshot(t, ns, dev)
		if slices.Equal(cur, last) {
			return cur
		}
		last = cur
	}
	t.Fatalf("ethtool of %s in %s did not settle in 10s:\n%s", dev, ns, strings.Join(last, "\n"))
	return nil
}

// wantEthtool fails unless `ethtool <args> dev` in ns matches every
// pattern (multi-line).
func wantEthtool(t *testing.T, ns, dev string, args []string, patterns ...string) {
	t.Helper()
	out := vm.GuestRun(t, ns, "ethtool", append(args, dev)...)
	for _, p := range patterns {
		if !regexp.MustCompile(`(?m)` + p).MatchString(out) {
			t.Errorf("ethtool %v %s lacks %q:\n%s", args, dev, p, out)
		}
	}
}

// TestInVMEthtoolE1000 renames an e1000 NIC found by permanentMac and sets
// its rings and pause frames (agent/host, as apply
// does), reads each back with the ethtool program, applies again (nothing
// to do), then drops the ethtool section: ethtool shows what it showed
// before the first apply.
func TestInVMEthtoolE1000(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVM$' ./test/netns/")
	}
	nic := bootNIC(t, "nic1")
	ns := testns.New(t).Name
	dev := vm.MoveNIC(t, nic, ns)
	before := settledSnapshot(t, ns, dev)
	t.Logf("e1000 %s before:\n%s\nwake-on-lan: %s", dev, before, vm.GuestRun(t, ns, "ethtool", dev))
	state := t.TempDir()
	iface := `{"name": "tune0", "type": "physical", "match": {"permanentMac": "` + nic.MAC + `"}`
	nsApply(t, ns, state, `{"version": 1, "interfaces": [`+iface+`, "ethtool": {
  "rings": {"rx": 512, "tx": 1024}, "pause": {"autoneg": false, "rx": false, "tx": false}}}]}`, "converge")
	wantEthtool(t, ns, "tune0", []string{"-g"}, `Current hardware settings:\s+RX:\s+512\s+RX Mini:\s+\S+\s+RX Jumbo:\s+\S+\s+TX:\s+1024\s`)
	wantEthtool(t, ns, "tune0", []string{"-a"}, `^Autonegotiate:\s+off$`, `^RX:\s+off$`, `^TX:\s+off$`)

	nsApply(t, ns, state, `{"version": 1, "interfaces": [`+iface+`}]}`, "converge")
	after := settledSnapshot(t, ns, "tune0")
	if after[0] != before[0] {
		t.Errorf("ethtool -g after the section left the intent:\n%s\nwant what it showed before:\n%s", after[0], before[0])
	}
	// With pause autonegotiation on, the RX and TX that ethtool -a shows
	// are what the link negotiated, not what was asked: the e1000 resolves
	// the values given back (those it showed) anew. What was set exactly
	// comes back exactly: autonegotiation.
	wantEthtool(t, ns, "tune0", []string{"-a"}, `^Autonegotiate:\s+on$`)
	if !strings.Contains(before[1], "Autonegotiate:\ton") {
		t.Errorf("the e1000 did not start with pause autonegotiation on:\n%s", before[1])
	}
	t.Logf("pause before:\n%s\nafter the give-back:\n%s", before[1], after[1])
	nsApply(t, ns, state, `{"version": 1}`, "converge")
	if name, _ := vm.LinkWithMAC(nic.MAC); name != "" {
		t.Errorf("NIC %s is in the initial namespace as %s", nic.ID, name)
	}
	vm.GuestRun(t, ns, "ip", "link", "show", "dev", dev) // the kernel name is back
}
