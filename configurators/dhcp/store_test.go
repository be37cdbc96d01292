package dhcp

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The state directory is not trusted more than a server: a planted lease
// of a loopback address (or another interface's) is not kept, and
// KeptLeases leaves it out.
func TestLoadLeaseRefusesPlanted(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"dhcp4-up0.json": `{"interface": "up0", "address": "127.0.0.2/8", "leaseTime": 3600000000000, "acquired": "2026-12-01T12:00:00Z"}`,
		"dhcp4-up1.json": `{"interface": "wan9", "address": "10.0.0.5/24", "leaseTime": 3600000000000, "acquired": "2026-12-01T12:00:00Z"}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if l, err := LoadLease(dir, "up0"); !errors.Is(err, ErrUnusable) || l != nil {
		t.Errorf("a loopback lease: %+v, %v: want ErrUnusable", l, err)
	}
	if l, err := LoadLease(dir, "up1"); err == nil || l != nil {
		t.Errorf("another interface's lease: %+v, %v: want an error", l, err)
	}
	if kept := KeptLeases(dir, time.Date(2026, 12, 1, 12, 30, 0, 0, time.UTC)); len(kept) != 0 {
		t.Errorf("kept %v, want none", kept)
	}
}
