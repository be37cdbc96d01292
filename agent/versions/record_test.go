package versions

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/internal/statefile"
)

// The Recorder every writer calls: a new version is logged once, the same
// intent again is none, a stale expectation is a ConflictError, and
// Current and CheckCurrent read the number back without an intent.
func TestRecorder(t *testing.T) {
	log, hook := test.NewNullLogger()
	sd := t.TempDir()
	r := Recorder{Store: Open(sd, 0), Log: log}
	in, err := intent.Parse(doc(1))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*intent.Intent{"a.json": in}
	m, isNew, err := r.Record(FilesSource("apply", []string{"a.json"}), files, 0)
	if err != nil || !isNew || m.Number != 1 || m.Source != "apply a.json" || len(hook.Entries) != 1 || hook.LastEntry().Level != logrus.InfoLevel {
		t.Fatalf("first: %+v %v %v, log %v", m, isNew, err, hook.Entries)
	}
	if _, isNew, err := r.Record("apply a.json", files, Any); err != nil || isNew || len(hook.Entries) != 1 {
		t.Fatalf("the same intent again: %v %v, log %d", isNew, err, len(hook.Entries))
	}
	if _, _, err := r.Record("apply a.json", files, 0); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale expect: %v", err)
	}
	cur, err := Current(r.Store)
	if err != nil || cur == nil || cur.Number != 1 || CheckCurrent(cur, 1) != nil || !errors.Is(CheckCurrent(nil, 1), ErrConflict) || CheckCurrent(nil, Any) != nil {
		t.Fatalf("current %+v, %v", cur, err)
	}
	if NextTrialName(cur) != "trial-2.json" || NextTrialName(nil) != "trial-1.json" {
		t.Fatal("trial names")
	}
	if DaemonSource(map[string]int{"b.json": 1, "a.json": 2}, false) != "daemon: files a.json,b.json" || DaemonSource(map[string]int{}, true) != "api" {
		t.Fatal("daemon sources")
	}
}

// The override in force round-trips, ends, and a damaged record is an
// error, never "none".
func TestOverrideRecord(t *testing.T) {
	sd := t.TempDir()
	if o, err := LoadOverride(sd); o != nil || err != nil {
		t.Fatalf("none: %+v %v", o, err)
	}
	want := &Override{Version: 3, Intent: []byte(`{"version":1}`), SetAside: "sha256:x"}
	if err := SaveOverride(sd, want); err != nil {
		t.Fatal(err)
	}
	got, err := LoadOverride(sd)
	if err != nil || got.Version != 3 || got.SetAside != "sha256:x" || got.Back().Digest != Digest(want.Intent) {
		t.Fatalf("%+v %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(sd, OverrideFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOverride(sd); !errors.Is(err, statefile.ErrDamaged) {
		t.Fatalf("damaged: %v", err)
	}
	if err := RemoveOverride(sd); err != nil || RemoveOverride(sd) != nil {
		t.Fatalf("remove: %v", err)
	}
}
