package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/statefile"
)

// TestRecoverAcceptDamaged: an emptied links.json (a needed record) makes
// `recover` fail naming it and the way out, and leaves it; a damaged lease
// (a cache) is only named. `recover --accept-damaged` sets both aside,
// saying what each held, and `recover` is then clean.
func TestRecoverAcceptDamaged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "host")
	links, lease := filepath.Join(dir, "links.json"), filepath.Join(dir, "dhcp4-wan0.json")
	if err := statefile.SaveJSON(links, map[string]any{"namespaces": []any{}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(links, nil, 0o600); err != nil { // emptied
		t.Fatal(err)
	}
	if err := os.WriteFile(lease, []byte(`{"interface": "wan0", "addr`), 0o600); err != nil { // cut short
		t.Fatal(err)
	}
	code, _, errOut := runCLI("--state-dir", dir, "recover")
	if code != exitFailed || !strings.Contains(errOut, links+": empty") || !strings.Contains(errOut, "recover --accept-damaged") ||
		!strings.Contains(errOut, "warning (a cache") || !strings.Contains(errOut, lease) {
		t.Errorf("recover over damaged records: exit %d, %q; want %d naming both, the lease as a cache", code, errOut, exitFailed)
	}
	if data, err := os.ReadFile(links); err != nil || len(data) != 0 {
		t.Errorf("recover without --accept-damaged changed %s: %q, %v", links, data, err)
	}

	code, _, errOut = runCLI("--state-dir", dir, "recover", "--accept-damaged")
	if code != exitOK || !strings.Contains(errOut, "set aside the damaged "+links) || !strings.Contains(errOut, "lost: the settings NICs had") {
		t.Errorf("recover --accept-damaged: exit %d, %q", code, errOut)
	}
	for _, p := range []string{links, lease} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there after --accept-damaged: %v", p, err)
		}
		if aside, _ := filepath.Glob(p + ".damaged-*"); len(aside) != 1 {
			t.Errorf("%s set aside as %v, want one <name>.damaged-<time>", p, aside)
		}
	}
	if code, _, errOut := runCLI("--state-dir", dir, "recover"); code != exitOK || errOut != "" {
		t.Errorf("recover after --accept-damaged: exit %d, %q", code, errOut)
	}
}
