//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// renameTrialState is what the trial of TestTrialRenameEthtoolKilled
// changes, as the kernel's tools show it: the name, ifindex, MAC and
// admin state of the link of MAC nicMAC (ip -j link), and its TCP
// segmentation features (ethtool --json -k).
func (e *cliEnv) renameTrialState() string {
	e.t.Helper()
	var name string
	var desc []string
	for _, l := range e.ipJSON("link", "show") {
		if l["address"] == nicMAC {
			name = l["ifname"].(string)
			flags, _ := json.Marshal(l["flags"])
			desc = append(desc, fmt.Sprintf("%s ifindex %v flags %s", name, l["ifindex"], flags))
		}
	}
	if len(desc) != 1 {
		e.t.Fatalf("ip -j link: %d links of MAC %s: %v", len(desc), nicMAC, desc)
	}
	var k []map[string]any
	if err := json.Unmarshal([]byte(e.exec("ethtool", "--json", "-k", name)), &k); err != nil || len(k) != 1 {
		e.t.Fatalf("ethtool --json -k %s: %v", name, err)
	}
	for _, f := range []string{"tx-tcp-segmentation", "tx-tcp-ecn-segmentation", "tx-tcp-mangleid-segmentation", "tx-tcp6-segmentation"} {
		v, _ := k[0][f].(map[string]any)
		desc = append(desc, fmt.Sprintf("%s active %v", f, v["active"]))
	}
	return strings.Join(desc, ", ")
}

// A trial that renames a matched NIC (ens5, a veth found by its mac, to
// lan0) and turns its TCP segmentation offload off, killed with SIGKILL
// while it is pending (applied, waiting for its confirmation), is
// reverted by `netagent recover` exactly: ip -j link shows ens5 again
// with its ifindex and admin state, and ethtool --json -k its features as
// they were. So is the same trial killed at every kill point of its
// apply (after each journal record and kernel operation: between the
// rename and the ethtool change too).
func TestTrialRenameEthtoolKilled(t *testing.T) {
	e := cliMatchEnv(t)
	want := e.renameTrialState()
	if !strings.HasPrefix(want, "ens5 ") || !strings.Contains(want, "tx-tcp-segmentation active true") {
		t.Fatalf("before the trial: %s", want)
	}
	trial := e.writeFile("trial.json", `{"version": 1, "interfaces": [{"name": "lan0", "type": "physical",
		"match": {"mac": "`+nicMAC+`"}, "ethtool": {"features": {"tcp-segmentation-offload": false}}, "addresses": ["192.0.2.10/24"]}]}`)
	proc, wait := e.startTrialCmd("--timeout", "5m", trial)
	during := e.renameTrialState()
	if !strings.HasPrefix(during, "lan0 ") || !strings.Contains(during, "tx-tcp-segmentation active false") {
		t.Errorf("the pending trial: %s, want lan0 with TSO off", during)
	}
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	if res := wait(); res.code != -1 {
		t.Fatalf("try was not killed: %s", res)
	}
	if got := e.renameTrialState(); got != during {
		t.Fatalf("the kill changed the kernel: %s, was %s", got, during)
	}
	if rec := e.netagent("recover"); rec.code != 0 || !strings.Contains(rec.stderr, "reverted the pending trial") {
		t.Fatalf("recover: %s", rec)
	}
	if got := e.renameTrialState(); got != want {
		t.Errorf("after recover: %s\nwant %s", got, want)
	}

	full := e.trialRun([]string{"NETAGENT_TEST_KILL_AFTER=100000000"}, "--timeout", "0s", trial)
	if full.code != 6 {
		t.Fatalf("the whole trial: want exit 6 (not confirmed), got %s", full)
	}
	if got := e.renameTrialState(); got != want {
		t.Errorf("after the trial's own revert: %s\nwant %s", got, want)
	}
	apply, _ := killPoints(t, full)
	for k := 1; k <= apply; k++ {
		if res := e.trialRun([]string{fmt.Sprintf("NETAGENT_TEST_KILL_AFTER=%d", k)}, "--timeout", "0s", trial); res.code != -1 {
			t.Fatalf("kill point %d: not killed: %s", k, res)
		}
		if rec := e.netagent("recover"); rec.code != 0 {
			t.Fatalf("recover after kill point %d: %s", k, rec)
		}
		if got := e.renameTrialState(); got != want {
			t.Errorf("after kill point %d of %d and recover: %s\nwant %s", k, apply, got, want)
		}
	}
	if ops := e.planOps(e.writeFile("none.json", `{"version": 1}`)); len(ops) != 0 {
		t.Errorf("after the recovers, netagent has something left to give back: %v", ops)
	}
	t.Logf("%d kill points in the apply, each recovered exactly", apply)
}

// A trial that swaps the names of two NICs (each matched by its mac),
// killed with SIGKILL while pending, or at any kill point of its apply, is
// reverted by `netagent recover` to the names they came up with (ip -j
// link), no temporary name left, nothing left recorded to give back. The
// kill points include those between the renames of one operation (after
// the NIC in the way is moved to its temporary name).
func TestTrialSwapKilled(t *testing.T) {
	e, boot := cliSwapEnv(t, 2)
	trial := e.swapIntent("swap.json", []string{"eth1", "eth0"})
	back := map[string]string{"eth0": "eth0", "eth1": "eth1"}
	proc, wait := e.startTrialCmd("--timeout", "5m", trial)
	e.wantNICNames("the pending trial", boot, map[string]string{"eth0": "eth1", "eth1": "eth0"})
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	if res := wait(); res.code != -1 {
		t.Fatalf("try was not killed: %s", res)
	}
	if rec := e.netagent("recover"); rec.code != 0 || !strings.Contains(rec.stderr, "reverted the pending trial") {
		t.Fatalf("recover: %s", rec)
	}
	e.wantNICNames("after recover", boot, back)

	full := e.trialRun([]string{"NETAGENT_TEST_KILL_AFTER=100000000"}, "--timeout", "0s", trial)
	if full.code != 6 {
		t.Fatalf("the whole trial: want exit 6 (not confirmed), got %s", full)
	}
	e.wantNICNames("after the trial's own revert", boot, back)
	apply, _ := killPoints(t, full)
	for k := 1; k <= apply; k++ {
		if res := e.trialRun([]string{fmt.Sprintf("NETAGENT_TEST_KILL_AFTER=%d", k)}, "--timeout", "0s", trial); res.code != -1 {
			t.Fatalf("kill point %d: not killed: %s", k, res)
		}
		if rec := e.netagent("recover"); rec.code != 0 {
			t.Fatalf("recover after kill point %d: %s", k, rec)
		}
		e.wantNICNames(fmt.Sprintf("after kill point %d of %d and recover", k, apply), boot, back)
	}
	if ops := e.planOps(e.writeFile("none.json", `{"version": 1}`)); len(ops) != 0 {
		t.Errorf("after the recovers, netagent has something left to give back: %v", ops)
	}
	t.Logf("%d kill points in the apply, each recovered to the boot names", apply)
}
