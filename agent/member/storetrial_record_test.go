package member

import (
	"os"
	"path/filepath"
	"testing"
)

// fleet-trials.json is opened as a state record: a symbolic link planted
// in its place (here to a forged file of trials) is refused, never read
// through. Before, os.ReadFile followed it and took the forged trials.
func TestFleetTrialsFileLinkIsRefused(t *testing.T) {
	dir := t.TempDir()
	forged := filepath.Join(t.TempDir(), "forged.json")
	if err := os.WriteFile(forged, []byte(`{"trials":{"groups/g1/routes.json":{"revision":7,"state":"confirmed"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(forged, filepath.Join(dir, fleetTrialsFile)); err != nil {
		t.Fatal(err)
	}
	s := &StoreSource{cfg: StoreSourceConfig{StateDir: dir}}
	if err := s.loadTrials(); err == nil {
		t.Fatalf("loadTrials through a link: nil error, trials %v", s.trials)
	}
}

// A damaged record (emptied) is reported, not taken as no trials.
func TestFleetTrialsFileDamageIsReported(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, fleetTrialsFile), []byte("netagent-state 1 40 00\n{\"trials\":{}}"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &StoreSource{cfg: StoreSourceConfig{StateDir: dir}}
	if err := s.loadTrials(); err == nil {
		t.Fatalf("loadTrials of a damaged record: nil error, trials %v", s.trials)
	}
}
