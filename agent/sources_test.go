package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/source"
	"github.com/netagent/netagent/agent/status"
)

// TestAgentKeepsTheLastGoodVersionOfARefusedFile runs the agent on a real
// intent directory: a file made world-writable and then changed is
// refused, status names it and why, the last good version stays applied;
// once its mode is safe again, its content is applied.
func TestAgentKeepsTheLastGoodVersionOfARefusedFile(t *testing.T) {
	dir := strictIntentDir(t)
	writeMode(t, filepath.Join(dir, "10-uplink.json"), uplinkDoc, 0o644)
	routes := filepath.Join(dir, "20-routes.json")
	writeMode(t, routes, routeDoc, 0o644)
	r := newRig(t, nil, func(c *Config) {
		c.Sources = []source.IntentSource{source.NewDirSource(dir, c.Log)}
		c.IntentDebounce = 5 * time.Millisecond
	}).start()
	if s := r.status(); !s.Ready || !r.k.has(routeRef) {
		t.Fatalf("not ready at start: %+v", s)
	}

	chmodOrFail(t, routes, 0o666) // someone opens it up, and someone else writes it
	if err := os.WriteFile(routes, []byte(twoRoutesDoc), 0o666); err != nil {
		t.Fatal(err)
	}
	f := r.waitFile("20-routes.json", "the refusal in status", func(f status.FileStatus) bool {
		return !f.Conditions[0].Status
	})
	if len(f.Errors) != 1 || !strings.Contains(f.Errors[0], "20-routes.json is writable by group and others (mode 0666)") ||
		f.Conditions[0].Reason != "Rejected" || !strings.Contains(f.Conditions[0].Message, "keeping the version accepted") {
		t.Errorf("status of the refused file: %+v", f)
	}
	if !r.k.has(routeRef) || r.k.has(route2Ref) {
		t.Errorf("kernel after the refusal: route %v, new route %v", r.k.has(routeRef), r.k.has(route2Ref))
	}

	chmodOrFail(t, routes, 0o644)
	r.waitFile("20-routes.json", "the file accepted again", func(f status.FileStatus) bool {
		return f.Conditions[0].Status && len(f.Errors) == 0
	})
	if !r.k.has(route2Ref) {
		t.Error("the content of the file made safe again was not applied")
	}
}

// waitFile polls the status until cond holds for the file's status (in
// real time: the rig runs on a real directory).
func (r *rig) waitFile(name, what string, cond func(status.FileStatus) bool) status.FileStatus {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := r.status()
		for _, f := range s.Files {
			if f.Name == name && cond(f) {
				return f
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %s: %+v", what, s.Files)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// strictIntentDir is an intent directory that passes the strict modes
// (owned by root, mode 0755): the agent's tests of refused files run as
// root.
func strictIntentDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the intent directory must be root's")
	}
	dir := filepath.Join(t.TempDir(), "intents")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeMode(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	chmodOrFail(t, path, mode)
}

func chmodOrFail(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
