//go:build vmtest

package netns_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/test/vm"
)

// linkWoLLines are the lines of `ethtool DEV` the test compares: the
// link settings and the Wake-on modes.
var linkWoLLines = regexp.MustCompile(`(?m)^\s+(Speed|Duplex|Auto-negotiation|Wake-on): .*$`)

// ethtoolLinkWoL returns those lines of `ethtool dev` in ns, trimmed.
func ethtoolLinkWoL(t *testing.T, ns, dev string) []string {
	t.Helper()
	var lines []string
	for _, l := range linkWoLLines.FindAllString(vm.GuestRun(t, ns, "ethtool", dev), -1) {
		lines = append(lines, strings.TrimSpace(l))
	}
	if len(lines) != 4 {
		t.Fatalf("ethtool %s: want speed, duplex, autoneg and Wake-on lines, got %q", dev, lines)
	}
	return lines
}

// TestInVMEthtoolLinkWoL: netagent applies ethtool link (speed 10,
// duplex half, autoneg off) and wakeOnLan (magic) to the VM's e100 NIC
// in a test namespace; the ethtool program reads them back, a second
// apply runs nothing (nsApply), and taking them out of the intent gives
// back the speed, duplex, autoneg and Wake-on found before.
func TestInVMEthtoolLinkWoL(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVM$' ./test/netns/")
	}
	ns := testns.New(t).Name
	dev := vm.MoveNIC(t, bootNIC(t, "e100"), ns)
	vm.GuestRun(t, ns, "ip", "link", "set", "dev", dev, "up")
	found := ethtoolLinkWoL(t, ns, dev)
	state := t.TempDir()
	nsApply(t, ns, state, `{"version": 1, "interfaces": [{"name": "`+dev+`", "type": "physical",
  "ethtool": {"link": {"speed": 10, "duplex": "half", "autoneg": false}, "wakeOnLan": ["magic"]}}]}`, "converge")
	want := []string{"Speed: 10Mb/s", "Duplex: Half", "Auto-negotiation: off", "Wake-on: g"}
	if got := ethtoolLinkWoL(t, ns, dev); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("after the apply, ethtool %s: %q, want %q (found %q)", dev, got, want, found)
	}
	nsApply(t, ns, state, `{"version": 1}`, "converge")
	if got := ethtoolLinkWoL(t, ns, dev); strings.Join(got, "|") != strings.Join(found, "|") {
		t.Errorf("out of the intent, ethtool %s: %q, want the found %q", dev, got, found)
	}
	t.Logf("found %q, set %q, given back", found, want)
}
