package host

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/internal/testns"
)

// pendingTrialRuntime returns a Runtime on a fresh namespace with a trial
// begun (and its process gone: the journal closed), and its record's path.
func pendingTrialRuntime(t *testing.T) (*Runtime, string) {
	t.Helper()
	tgt := testns.New(t)
	log := logrus.New()
	log.SetOutput(io.Discard)
	stateDir := filepath.Join(t.TempDir(), "state")
	rt, err := Open(tgt.Name, stateDir, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	tr, err := rt.BeginTrial(Trial{Started: time.Now(), Deadline: time.Now().Add(time.Minute),
		Files: map[string][]byte{"a.json": []byte(`{"version":1}`)}})
	if err != nil {
		t.Fatal(err)
	}
	tr.stop()
	return rt, trialPath(stateDir, trialName)
}

// A trial record changed on disk (here: its PID, still valid JSON) is
// damaged: PendingTrial and Recover fail naming it, never take it for
// another trial nor for none. Before, trial.json was plain JSON, read as
// it stood: the forged PID was taken for the trial's.
func TestTrialRecordDamageIsReported(t *testing.T) {
	t.Parallel()
	rt, path := pendingTrialRuntime(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid := regexp.MustCompile(`"pid":\d`)
	loc := pid.FindIndex(data)
	if loc == nil {
		t.Fatalf("no pid in the trial record: %s", data)
	}
	forged := bytes.Clone(data)
	forged[loc[1]-1] = '0' + (forged[loc[1]-1]-'0'+1)%10
	if err := os.WriteFile(path, forged, 0o600); err != nil {
		t.Fatal(err)
	}
	if tr, err := PendingTrial(rt.stateDir); !errors.Is(err, statefile.ErrDamaged) || !strings.Contains(err.Error(), path) {
		t.Errorf("PendingTrial of a changed record: %+v, %v; want ErrDamaged naming %s", tr, err, path)
	}
	if rec, err := rt.Recover(context.Background()); !errors.Is(err, statefile.ErrDamaged) {
		t.Errorf("Recover of a changed record: %+v, %v; want ErrDamaged", rec, err)
	}
	if d := statefile.Describe(path); !strings.Contains(d, "pending trial") {
		t.Errorf("the trial record is registered as %q, want what it holds", d)
	}
}

// A trial record replaced by a symbolic link (dangling, or to a file of
// someone else's) is refused, never followed: before, a dangling link
// read as "no trial pending", and recover left the trial's changes in
// force.
func TestTrialRecordLinkIsRefused(t *testing.T) {
	t.Parallel()
	rt, path := pendingTrialRuntime(t)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(t.TempDir(), "gone.json"), path); err != nil {
		t.Fatal(err)
	}
	if tr, err := PendingTrial(rt.stateDir); err == nil {
		t.Errorf("PendingTrial through a dangling link: %+v, nil; want an error", tr)
	}
	if rec, err := rt.Recover(context.Background()); err == nil {
		t.Errorf("Recover through a dangling link: %+v, nil; want an error", rec)
	}
}

// The outcome of the last trial is a record too: one changed on disk is
// not shown as the trial's outcome.
func TestTrialOutcomeDamageIsNotShown(t *testing.T) {
	stateDir := t.TempDir()
	if err := os.Mkdir(filepath.Join(stateDir, TrialDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := RecordOutcome(stateDir, Outcome{PID: 41, Result: "reverted", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	path := trialPath(stateDir, outcomeName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.Replace(data, []byte(`"reverted"`), []byte(`"confirmed"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if o, err := LastOutcome(stateDir); !errors.Is(err, statefile.ErrDamaged) {
		t.Errorf("LastOutcome of a changed record: %+v, %v; want ErrDamaged", o, err)
	}
}
