//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pendingTrialEnv is trialEnv with 100 routes in the trial, and the trial
// left pending: `netagent try` killed (SIGKILL, at its last kill point
// of the apply) once the trial's changes are in the kernel. It returns
// the snapshot from before the trial and the trial's pid.
func pendingTrialEnv(t *testing.T) (e *cliEnv, trial, before string, pid int) {
	e = cliNewEnv(t)
	e.ip("link", "add", "phys1", "type", "veth", "peer", "name", "phys1-peer")
	e.ip("link", "set", "phys1", "up")
	e.ip("link", "set", "phys1-peer", "up")
	first, trial := trialIntents(e, 100)
	e.mustRun(0, "apply", first)
	before = e.trialSnapshot()
	full := e.trialRun([]string{"NETAGENT_TEST_KILL_AFTER=100000000"}, "--timeout", "0s", trial)
	apply, _ := killPoints(t, full)
	if res := e.trialRun([]string{fmt.Sprintf("NETAGENT_TEST_KILL_AFTER=%d", apply)}, "--timeout", "0s", trial); res.code != -1 {
		t.Fatalf("not killed: %s", res)
	}
	data, err := os.ReadFile(filepath.Join(e.stateDir, "trial", "trial.json"))
	if err != nil {
		t.Fatalf("no pending trial: %v", err)
	}
	var rec struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	return e, trial, before, rec.PID
}

// A dry run writes nothing, also with a trial pending that a killed
// `netagent try` left: plan and check leave the kernel as the trial left
// it and the trial pending, exit non-zero, name the trial and say to run
// `netagent recover`; recover then reverts it exactly.
func TestTrialPendingDryRunsWriteNothing(t *testing.T) {
	e, trial, before, pid := pendingTrialEnv(t)
	during := e.trialSnapshot()
	if during == before {
		t.Fatal("the killed trial changed nothing")
	}
	for _, cmd := range []string{"plan", "check"} {
		res := e.netagent(cmd, trial)
		if res.code == 0 || !strings.Contains(res.stderr, fmt.Sprintf("trial of pid %d", pid)) || !strings.Contains(res.stderr, "`netagent recover`") {
			t.Errorf("%s with a pending trial: want exit non-zero naming the trial (pid %d) and `netagent recover`: %s", cmd, pid, res)
		}
		if strings.Contains(res.stderr, "reverted") {
			t.Errorf("%s says it reverted: %s", cmd, res)
		}
		if got := e.trialSnapshot(); got != during {
			t.Fatalf("%s changed the kernel:\n%s", cmd, lineDiff(during, got))
		}
		if _, err := os.Stat(filepath.Join(e.stateDir, "trial", "trial.json")); err != nil {
			t.Fatalf("%s: the trial is no longer pending: %v", cmd, err)
		}
	}
	if res := e.mustRun(0, "recover"); !strings.Contains(res.stderr, "reverted the pending trial") {
		t.Errorf("recover: %s", res)
	}
	if got := e.trialSnapshot(); got != before {
		t.Fatalf("recover is not exact:\n%s", lineDiff(before, got))
	}
}
