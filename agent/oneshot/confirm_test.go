package oneshot

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/status"
)

// pendingTrial makes stateDir hold a pending trial of pid, started at
// started.
func pendingTrial(t *testing.T, stateDir string, pid int, started time.Time) {
	t.Helper()
	data, _ := json.Marshal(host.Trial{PID: pid, Started: started, Deadline: started.Add(time.Hour)})
	if err := os.MkdirAll(filepath.Join(stateDir, host.TrialDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stateDir, host.TrialDir, "trial.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A confirm or rollback finds the process running the trial: none
// pending, one that no process runs (abandoned), a one-shot's, the
// daemon's (named by its id in the socket API).
func TestFindRunningTrial(t *testing.T) {
	sd := t.TempDir()
	if _, err := FindRunningTrial(sd); !errors.Is(err, host.ErrNoTrial) {
		t.Fatalf("none pending: %v", err)
	}
	started := time.Date(2026, 12, 1, 21, 0, 0, 123456789, time.UTC)
	pendingTrial(t, sd, os.Getpid(), started)
	if _, err := FindRunningTrial(sd); !errors.Is(err, host.ErrTrialPending) {
		t.Fatalf("abandoned: %v", err)
	}
	lk, _, err := host.TryLock(sd, host.Holder{PID: os.Getpid(), Command: "run", Socket: "/run/x.sock", Since: started})
	if err != nil || lk == nil {
		t.Fatalf("taking the lock: %v", err)
	}
	defer lk.Release()
	rt, err := FindRunningTrial(sd)
	if err != nil || rt.DaemonTrial() != status.TrialID(started) {
		t.Fatalf("the daemon's: %+v, %v", rt, err)
	}
	rt.Holder.Socket = ""
	if rt.DaemonTrial() != "" {
		t.Fatalf("a one-shot's trial named for the daemon: %q", rt.DaemonTrial())
	}
}

// The outcome answers the request when it is the one asked for.
func TestAnswered(t *testing.T) {
	if !Answered(&host.Outcome{Result: "confirmed"}, host.RequestConfirmed) || Answered(&host.Outcome{Result: "reverted"}, host.RequestConfirmed) ||
		!Answered(&host.Outcome{Result: "reverted"}, host.RequestReverted) {
		t.Fatal("wrong answers")
	}
}
