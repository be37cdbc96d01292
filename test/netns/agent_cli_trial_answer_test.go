//go:build !vmtest

package netns_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `netagent rollback` sent to a running `try` whose revert is
// RevertIncomplete (its journal emptied meanwhile) is answered at once
// with the outcome, exit 1, never after its own timeout with "did not
// answer"; a `confirm` then, the process gone and the trial pending, says
// at once to run `netagent recover`.
func TestTrialRequestAnsweredWhenRevertIncomplete(t *testing.T) {
	e, trial := trialEnv(t)
	wait := e.startTrial("--timeout", "5m", trial)
	writeOrFail(t, filepath.Join(e.stateDir, "trial", "journal"), nil)
	start := time.Now()
	res := e.netagent("rollback")
	took := time.Since(start)
	if res.code != 1 || !strings.Contains(res.stderr, "RevertIncomplete") || !strings.Contains(res.stderr, "the journal is empty") {
		t.Errorf("rollback of a trial whose revert is incomplete: want exit 1 and RevertIncomplete with the reason: %s", res)
	}
	if strings.Contains(res.stderr, "did not answer") || took > 10*time.Second {
		t.Errorf("rollback waited %v for an answer: %s", took, res)
	}
	if r := wait(); r.code != 3 || !strings.Contains(r.stderr, "RevertIncomplete") {
		t.Errorf("try whose revert is incomplete: %s", r)
	}
	start = time.Now()
	res = e.netagent("confirm")
	if res.code != 1 || !strings.Contains(res.stderr, "`netagent recover`") || time.Since(start) > 10*time.Second {
		t.Errorf("confirm of a trial whose process ended: want exit 1 at once, saying to run `netagent recover`: %s", res)
	}
	if strings.Contains(res.stderr, "touches the namespace") {
		t.Errorf("confirm says the next netagent reverts the trial: %s", res)
	}
}
