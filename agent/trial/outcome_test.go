package trial

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/status"
)

// A record of the last trial that cannot be read is an outcome "unknown"
// saying why, not no outcome (status would show none).
func TestLastOutcomeUnreadable(t *testing.T) {
	sd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(sd, host.TrialDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sd, host.TrialDir, "last.json"), []byte("{garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := LastOutcome(sd)
	if o == nil || o.Result != status.TrialUnknown || !strings.Contains(o.Reason, "cannot be read") {
		t.Fatalf("an unreadable record: %+v", o)
	}
	if OneShotStatus(sd) == nil {
		t.Fatal("no status for an unreadable last outcome")
	}
	if OneShotStatus(t.TempDir()) != nil {
		t.Fatal("a status for a state directory without trials")
	}
}
