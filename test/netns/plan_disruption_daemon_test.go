//go:build !vmtest

package netns_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The same intent change planned through the daemon and one-shot prints
// the same disruption: a NIC found down (as NICs are at boot) that leaves
// the intent goes down (link down, certain: the links.json record of its
// found settings says so), not "possible link down" through the daemon.
func TestPlanDisruptionViaDaemonAsOneShot(t *testing.T) {
	t.Parallel()
	e := daemonBareEnv(t)
	e.ip("link", "add", "nic0", "type", "veth", "peer", "name", "nic0-peer")
	e.ip("link", "set", "nic0-peer", "up")
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	withNIC := write("a.json", `{"version": 1,
  "interfaces": [{"name": "nic0", "type": "physical", "addresses": ["192.0.2.10/24"]}],
  "neighbors": [{"dev": "nic0", "ip": "192.0.2.1", "mac": "02:00:00:00:00:01"}]}`)
	noNIC := write("c.json", `{"version": 1}`)
	e.start()
	if res := e.cli("apply", "--via-daemon", withNIC); res.code != 0 {
		t.Fatalf("apply --via-daemon: %s", res)
	}
	viaDaemon := e.cli("plan", "--via-daemon", noNIC)
	e.stop()
	oneShot := e.cli("plan", noNIC)
	if viaDaemon.code != 0 || oneShot.code != 0 {
		t.Fatalf("plan --via-daemon: %s\nplan: %s", viaDaemon, oneShot)
	}
	want := disruptionLines(oneShot.stdout)
	if !slices.Contains(want, "disruption: link nic0 goes down (link down): delete interface/nic0") {
		t.Fatalf("the one-shot plan does not say nic0 goes down: %s", oneShot)
	}
	if got := disruptionLines(viaDaemon.stdout); !slices.Equal(got, want) {
		t.Errorf("plan --via-daemon's disruption differs from the one-shot plan's:\nvia the daemon:\n%s\none-shot:\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// disruptionLines are a plan's disruption lines: its summary, and the
// line under each operation.
func disruptionLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "disruption:") || strings.HasPrefix(l, "traffic:") {
			lines = append(lines, l)
		}
	}
	return lines
}
