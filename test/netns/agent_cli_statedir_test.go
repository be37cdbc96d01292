//go:build !vmtest

package netns_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentCLIDamagedLinkRecord: the reproduction. uplink0 (MTU
// 1500 as found) is set to 1400 by an apply; links.json is emptied; an
// apply without uplink0 used to "restore" nothing (MTU 1400, exit 0). Now
// apply and plan fail (exit 3) naming the file, the MTU stays, the file
// stays as it is; recover fails (exit 1) naming it; recover
// --accept-damaged sets it aside saying what was lost; the next apply
// runs.
func TestAgentCLIDamagedLinkRecord(t *testing.T) {
	e := cliNewEnv(t)
	nic := e.writeFile("nic.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "mtu": 1400}]}`)
	e.mustRun(0, "apply", nic)
	links := filepath.Join(e.stateDir, "links.json")
	if err := os.WriteFile(links, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	empty := e.writeFile("empty.json", `{"version": 1}`)
	for _, cmd := range []string{"apply", "plan"} {
		res := e.mustRun(3, cmd, empty)
		if !strings.Contains(res.stderr, links+": empty") || !strings.Contains(res.stderr, "recover --accept-damaged") {
			t.Errorf("%s over an emptied links.json: %s", cmd, res)
		}
	}
	if mtu := e.link("uplink0")["mtu"]; mtu != float64(1400) {
		t.Errorf("uplink0 MTU %v after the refused apply, want 1400 (nothing done with guessed originals)", mtu)
	}
	if data, err := os.ReadFile(links); err != nil || len(data) != 0 {
		t.Errorf("links.json after the refusals: %q, %v; want it as it was", data, err)
	}
	if res := e.run(nil, "--state-dir", e.stateDir, "recover"); res.code != 1 || !strings.Contains(res.stderr, links) {
		t.Errorf("recover: %s; want exit 1 naming %s", res, links)
	}
	res := e.run(nil, "--state-dir", e.stateDir, "recover", "--accept-damaged")
	if res.code != 0 || !strings.Contains(res.stderr, "lost: the settings NICs had before netagent changed them") {
		t.Errorf("recover --accept-damaged: %s", res)
	}
	e.mustRun(0, "apply", empty)
}

// TestAgentCLIStateDirOthersCanChange: a state directory owned by nobody
// makes apply and the daemon refuse to start (exit 3) with the reason,
// before anything changes in the namespace or is made in the directory.
func TestAgentCLIStateDirOthersCanChange(t *testing.T) {
	e := cliNewEnv(t)
	if err := os.Chown(e.stateDir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	nic := e.writeFile("nic.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "mtu": 1400}]}`)
	why := "is owned by uid 65534, not by root"
	if res := e.mustRun(3, "apply", nic); !strings.Contains(res.stderr, "state directory "+e.stateDir) || !strings.Contains(res.stderr, why) {
		t.Errorf("apply: %s; want the state directory and %q", res, why)
	}
	res := e.run(nil, "--state-dir", e.stateDir, "run", "--netns", e.tgt.Name, "--intent-dir", filepath.Dir(nic),
		"--socket", filepath.Join(t.TempDir(), "s.sock"))
	if res.code != 3 || !strings.Contains(res.stderr, why) {
		t.Errorf("run: %s; want exit 3 and %q", res, why)
	}
	if mtu := e.link("uplink0")["mtu"]; mtu != float64(1500) {
		t.Errorf("uplink0 MTU %v, want 1500: nothing changes", mtu)
	}
	if entries, _ := os.ReadDir(e.stateDir); len(entries) != 0 {
		t.Errorf("made in the refused state directory: %v", entries)
	}
}
