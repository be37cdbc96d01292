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
// rename and the ethtool change, and between a rename and the up after
// it, too).
func TestTrialRenameEthtoolKilled(t *testing.T) {
	e := cliMatchEnv(t)
	want := e.renameTrialState()
	if !strings.HasPrefix(want, "ens5 ") || !strings.Contains(want, "tx-tcp-segmentation active true") {
		t.Fatalf("before the trial: %s", want)
	}
	trial := e.writeFile("trial.json", `{"version": 1, "interfaces": [{"name": "lan0", "type": "physical",
		"match": {"mac": "`+nicMAC+`"}, "ethtool": {"features": {"tcp-segmentation-offload": false}}, "addresses": ["192.0.2.10/24"]}]}`)
	e.killedTrialsRevert(trial, func() {
		if during := e.renameTrialState(); !strings.HasPrefix(during, "lan0 ") || !strings.Contains(during, "tx-tcp-segmentation active false") {
			t.Errorf("the pending trial: %s, want lan0 with TSO off", during)
		}
	}, func(what string) {
		if got := e.renameTrialState(); got != want {
			t.Errorf("%s: %s\nwant %s", what, got, want)
		}
	})
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
	e.killedTrialsRevert(trial, func() {
		e.wantNICNames("the pending trial", boot, map[string]string{"eth0": "eth1", "eth1": "eth0"})
	}, func(what string) {
		e.wantNICNames(what, boot, map[string]string{"eth0": "eth0", "eth1": "eth1"})
	})
}

// killedTrialsRevert runs the trial (`netagent try` of the file) and
// kills it with SIGKILL while it is pending (after pending checks the
// kernel), then at each kill point of its apply, each time followed by
// `netagent recover`; reverted checks the kernel after each recover, and
// after the trial's own revert (not confirmed). Then netagent has nothing
// left to give back (a plan of an empty intent does nothing).
func (e *cliEnv) killedTrialsRevert(trial string, pending func(), reverted func(what string)) {
	e.t.Helper()
	proc, wait := e.startTrialCmd("--timeout", "5m", trial)
	pending()
	if err := proc.Kill(); err != nil {
		e.t.Fatal(err)
	}
	if res := wait(); res.code != -1 {
		e.t.Fatalf("try was not killed: %s", res)
	}
	if rec := e.netagent("recover"); rec.code != 0 || !strings.Contains(rec.stderr, "reverted the pending trial") {
		e.t.Fatalf("recover: %s", rec)
	}
	reverted("after SIGKILL while pending and recover")
	full := e.trialRun([]string{"NETAGENT_TEST_KILL_AFTER=100000000"}, "--timeout", "0s", trial)
	if full.code != 6 {
		e.t.Fatalf("the whole trial: want exit 6 (not confirmed), got %s", full)
	}
	reverted("after the trial's own revert")
	apply, _ := killPoints(e.t, full)
	for k := 1; k <= apply; k++ {
		if res := e.trialRun([]string{fmt.Sprintf("NETAGENT_TEST_KILL_AFTER=%d", k)}, "--timeout", "0s", trial); res.code != -1 {
			e.t.Fatalf("kill point %d: not killed: %s", k, res)
		}
		if rec := e.netagent("recover"); rec.code != 0 {
			e.t.Fatalf("recover after kill point %d: %s", k, rec)
		}
		reverted(fmt.Sprintf("after kill point %d of %d and recover", k, apply))
	}
	if ops := e.planOps(e.writeFile("none.json", `{"version": 1}`)); len(ops) != 0 {
		e.t.Errorf("after the recovers, netagent has something left to give back: %v", ops)
	}
	e.t.Logf("%d kill points in the apply, each recovered", apply)
}
