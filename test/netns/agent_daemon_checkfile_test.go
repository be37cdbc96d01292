//go:build !vmtest

package netns_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAgentDaemonCheckReadOnly: check --via-daemon FILE compares the
// kernel with FILE as the whole intent, as a one-shot check does (a file
// that is also in the daemon's intent directory is no duplicate), prints
// each item that differs, is missing or extra with its attributes (no
// numbered operations), and changes nothing: no API document, no version.
func TestAgentDaemonCheckReadOnly(t *testing.T) {
	e := daemonNewEnv(t)
	e.converge()
	before := e.mustStatus()
	write := func(name, content string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	whole := write("whole.json", `{"version": 1,
	  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.2/24"]}],
	  "routes": [{"to": "198.51.100.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10}]}`)
	res := e.cli("check", "--via-daemon", whole)
	if res.code != 0 || !strings.HasPrefix(res.stdout, "ok: running matches the intent (") || res.stderr != "" {
		t.Errorf("check --via-daemon of the daemon's whole intent: want exit 0, got %s", res)
	}

	// The daemon's own 10-uplink.json: the route of 20-routes.json is extra.
	res = e.cli("check", "--via-daemon", filepath.Join(e.intentDir, "10-uplink.json"))
	want := "route/main 198.51.100.0/24 metric 10: extra (have route 198.51.100.0/24 via 192.0.2.1 dev uplink0 table main metric 10 scope global)\n" +
		"1 item differs from the intent\n"
	if res.code != 1 || res.stdout != want {
		t.Errorf("check --via-daemon of a file of the intent directory: want exit 1 and\n%s\ngot %s", want, res)
	}

	changed := write("changed.json", `{"version": 1,
	  "interfaces": [{"name": "uplink0", "type": "physical", "mtu": 1400, "addresses": ["192.0.2.2/24"]}],
	  "routes": [{"to": "198.51.100.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 20}]}`)
	res = e.cli("check", "--via-daemon", changed)
	for _, line := range []string{
		"interface/uplink0: MTU: want 1400, have 1500",
		"route/main 198.51.100.0/24 metric 10: extra (have route 198.51.100.0/24 via 192.0.2.1 dev uplink0 table main metric 10 scope global)",
		"route/main 198.51.100.0/24 metric 20: missing (want route 198.51.100.0/24 via 192.0.2.1 dev uplink0 table main metric 20 scope global)",
		"3 items differ from the intent",
	} {
		if !slices.Contains(strings.Split(res.stdout, "\n"), line) {
			t.Errorf("check --via-daemon of a changed intent lacks the line %q: %s", line, res)
		}
	}
	if res.code != 1 || strings.Contains(res.stdout, " 1. ") {
		t.Errorf("check --via-daemon of a changed intent: want exit 1, no numbered operations: %s", res)
	}

	after := e.mustStatus()
	var fb, fa []string
	for _, f := range before.Files {
		fb = append(fb, f.Name)
	}
	for _, f := range after.Files {
		fa = append(fa, f.Name)
	}
	if after.Version != before.Version || !slices.Equal(fa, fb) {
		t.Errorf("a check changed the daemon: version %d -> %d, files %v -> %v", before.Version, after.Version, fb, fa)
	}
	if _, ok := e.route("198.51.100.0/24"); !ok {
		t.Error("a check deleted the daemon's route")
	}
}
