//go:build !vmtest

package netns_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/netagent/netagent/agent/status"
)

// TestAgentDaemonReactsToIntentFiles: the daemon applies the intent
// directory at start, follows a file rewritten by rename, keeps the last
// good version of a file that turns invalid (and says so in status),
// re-reads everything on SIGHUP, and never touches foreign objects.
func TestAgentDaemonReactsToIntentFiles(t *testing.T) {
	e := daemonNewEnv(t)
	foreignUntouched := e.placeForeign()
	e.converge()
	st, err := e.status()
	if err != nil || !st.Ready || len(st.Files) != 2 {
		t.Fatalf("status after start: %+v %v", st, err)
	}
	for _, f := range st.Files {
		for _, c := range f.Conditions {
			if c.Status != (c.Type != status.CondDegraded) {
				t.Errorf("%s: condition %+v", f.Name, c)
			}
		}
	}
	if r, _ := e.route("198.51.100.0/24"); r.Protocol == "static" || r.Protocol == "boot" {
		t.Errorf("the route is not marked as netagent's: protocol %q", r.Protocol)
	}

	// A file rewritten by rename.
	e.writeIntent("20-routes.json", daemonRoutes2File)
	e.waitFor("the second route", func() (bool, string) {
		_, ok := e.route("203.0.113.0/24")
		return ok, e.ip("route")
	})
	if len(e.logs.entries(map[string]string{"msg": "reconciling", "reason": "intent"})) == 0 {
		t.Error("no reconcile logged with reason intent")
	}
	if len(e.logs.entries(map[string]string{"msg": "kernel operation", "op": "create", "item": "203.0.113.0/24"})) != 1 {
		t.Errorf("no single log line for the kernel operation\n%s", e.logs.String())
	}

	// The file turns invalid: rejected, its last good version stays.
	e.writeIntent("20-routes.json", `{"version": 1, "routes": [{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "nope0"}]}`)
	e.waitFor("the invalid file in status", func() (bool, string) {
		st, err := e.status()
		for _, f := range st.Files {
			if f.Name == "20-routes.json" && !f.Conditions[0].Status {
				return strings.Contains(strings.Join(f.Errors, "\n"), "routes[0].dev"), strings.Join(f.Errors, "\n")
			}
		}
		return false, "no invalid file yet: " + daemonErrString(err)
	})
	if _, ok := e.route("203.0.113.0/24"); !ok {
		t.Fatal("the last good version of the file was withdrawn")
	}
	if st, _ := e.status(); st.Ready {
		t.Error("status says Ready with an invalid file")
	}
	if len(e.logs.entries(map[string]string{"file": "20-routes.json", "problem": "routes[0].dev"})) == 0 {
		t.Error("the problem was not logged with the file")
	}

	// Removed while invalid: its objects go (nothing refers to them).
	if err := os.Remove(filepath.Join(e.intentDir, "20-routes.json")); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the routes withdrawn", func() (bool, string) {
		_, a := e.route("198.51.100.0/24")
		_, b := e.route("203.0.113.0/24")
		return !a && !b, e.ip("route")
	})

	// SIGHUP reads everything again.
	e.writeIntent("20-routes.json", daemonRoutesFile)
	e.cmd.Process.Signal(syscall.SIGHUP)
	e.waitFor("the reload", func() (bool, string) {
		return len(e.logs.entries(map[string]string{"msg": "reloading every intent source"})) > 0, ""
	})
	e.waitFor("the route back and Ready", func() (bool, string) {
		st, _ := e.status()
		_, ok := e.route("198.51.100.0/24")
		return ok && st.Ready, e.ip("route")
	})
	foreignUntouched()
}

func daemonErrString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
