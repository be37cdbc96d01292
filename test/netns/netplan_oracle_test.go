package netns_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/importer/netplan"
)

// TestNetplanExamplesImport imports each of netplan.io's examples (read
// from /usr/share/doc, never copied: GPL): each is either an intent that
// validates or refused with a line of its own; the table of outcomes is
// logged. The networkd comparison of the issue is not done yet.
func TestNetplanExamplesImport(t *testing.T) {
	files, err := filepath.Glob("/usr/share/doc/netplan/examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no netplan examples (scripts/setup.sh installs netplan.io): %v", err)
	}
	for _, f := range files {
		res, err := netplan.Import([]string{f}, importer.Options{})
		var ie *importer.Error
		switch {
		case err == nil:
			t.Logf("%-45s imports (%d interfaces, %d routes)", filepath.Base(f), len(res.Intent.Interfaces), len(res.Intent.Routes))
		case errors.As(err, &ie):
			r := ie.Refusals[0]
			if r.Pos.Line == 0 {
				t.Errorf("%s: refused without a line: %v", f, err)
			}
			t.Logf("%-45s refused at %d: %s: %s", filepath.Base(f), r.Pos.Line, r.Key, r.Why)
		default:
			t.Errorf("%s: %v", f, err)
		}
	}
}
