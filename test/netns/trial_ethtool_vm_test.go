//go:build vmtest

package netns_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/test/vm"
)

// trialEthtoolState returns what the trial of TestInVMTrialEthtoolKilled
// changes, as the kernel's tools show it, once two reads half a second
// apart agree (settledSnapshot's approach: a ring change resets the
// e1000): the name of the link of MAC mac in ns (netlink), its rings
// (`ethtool -g`) and its features (`ethtool -k`).
func trialEthtoolState(t *testing.T, tgt *netnsx.Target, mac string) string {
	t.Helper()
	read := func() string {
		links, err := tgt.NL.LinkList()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, l := range links {
			if l.Attrs().HardwareAddr.String() == mac {
				names = append(names, l.Attrs().Name)
			}
		}
		if len(names) != 1 {
			t.Fatalf("links of MAC %s in %s: %v", mac, tgt.Name, names)
		}
		return "name " + names[0] + "\n" + vm.GuestRun(t, tgt.Name, "ethtool", "-g", names[0]) +
			vm.GuestRun(t, tgt.Name, "ethtool", "-k", names[0])
	}
	last := read()
	for range 20 {
		time.Sleep(500 * time.Millisecond)
		cur := read()
		if cur == last {
			return cur
		}
		last = cur
	}
	t.Fatalf("the e1000 of MAC %s did not settle in 10s:\n%s", mac, last)
	return ""
}

// A trial that renames an e1000 found by permanentMac, changes its rx and
// tx rings and turns GRO and TSO off (the e1000 lets both change), run
// by a process killed (SIGKILL) at points spread over its apply, or
// ending right after it: Recover, as `netagent recover` runs it, gives
// back the name (netlink), the rings (`ethtool -g`) and the features
// (`ethtool -k`) exactly.
func TestInVMTrialEthtoolKilled(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVM$' ./test/netns/")
	}
	nic := bootNIC(t, "nic1")
	tgt := testns.New(t)
	dev := vm.MoveNIC(t, nic, tgt.Name)
	vm.GuestRun(t, tgt.Name, "ip", "link", "set", "dev", dev, "up")
	before := trialEthtoolState(t, tgt, nic.MAC)
	for _, want := range []string{"generic-receive-offload: on", "tcp-segmentation-offload: on"} {
		if !strings.Contains(before, want) {
			t.Fatalf("the e1000 before the trial lacks %q:\n%s", want, before)
		}
	}
	trial := `{"version": 1, "interfaces": [{"name": "tune0", "type": "physical", "match": {"permanentMac": "` + nic.MAC + `"},
  "ethtool": {"rings": {"rx": 512, "tx": 1024}, "features": {"gro": false, "tso": false}}}]}`
	rt, stateDir := trialRuntime(t, tgt.Name)
	child := func(what string, killAfter int) (string, bool) {
		return runTrialChild(t, what, tgt.Name, stateDir, trial, killAfter)
	}
	recoverExact := func(what string) {
		t.Helper()
		trialRecoverExact(t, rt, what, before, func() string { return trialEthtoolState(t, tgt, nic.MAC) })
	}
	points := trialChildPoints(t, "try", child)
	during := trialEthtoolState(t, tgt, nic.MAC)
	for _, want := range []string{"name tune0\n", "generic-receive-offload: off", "tcp-segmentation-offload: off"} {
		if !strings.Contains(during, want) {
			t.Fatalf("the trial lacks %q:\n%s", want, during)
		}
	}
	wantEthtool(t, tgt.Name, "tune0", []string{"-g"}, `Current hardware settings:\s+RX:\s+512\s+RX Mini:\s+\S+\s+RX Jumbo:\s+\S+\s+TX:\s+1024\s`)
	recoverExact("after the whole apply")
	ks := spreadVM(1, points, 3)
	for _, k := range ks {
		if _, killed := child("try", k); !killed {
			t.Fatalf("kill point %d of %d: not killed", k, points)
		}
		recoverExact(fmt.Sprintf("killed at point %d of %d", k, points))
	}
	if p, err := host.PendingTrial(stateDir); err != nil || p != nil {
		t.Fatalf("a trial is still pending after the recovers: %+v %v", p, err)
	}
	t.Logf("kill points %v of the apply's %d, and after the whole apply: each recovered exactly\nbefore:\n%s\nduring:\n%s",
		ks, points, before, during)
}
