//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAgentDaemonFoundByNamespace: a daemon on a socket of its own is
// found by status and metrics through the lock of the namespace's state
// directory (--netns, --state-dir), as apply --via-daemon finds it; once
// it stopped, status --json says so.
func TestAgentDaemonFoundByNamespace(t *testing.T) {
	e := daemonNewEnv(t)
	e.writeIntent("10-uplink.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.2/24"]}]}`)
	e.start()
	if res := e.netagent("status"); res.code != 0 || !strings.HasPrefix(res.stdout, "netagent: READY, ") || res.stderr != "" {
		t.Errorf("status --netns --state-dir: want exit 0 and READY, got %s", res)
	}
	var st struct {
		Ready bool `json:"ready"`
	}
	if res := e.netagent("status", "--json"); res.code != 0 || json.Unmarshal([]byte(res.stdout), &st) != nil || !st.Ready {
		t.Errorf("status --json --netns --state-dir: %s", res)
	}
	if res := e.netagent("metrics"); res.code != 0 || !strings.Contains(res.stdout, "\nnetagent_intent_version 1\n") {
		t.Errorf("metrics --netns --state-dir: %s", res)
	}
	e.stop()
	res := e.netagent("status", "--json")
	want := "netagent: no daemon serves namespace " + e.tgt.Name + " (none holds the lock of the state directory " + e.stateDir +
		"; --state-dir or --socket PATH names another daemon)\n"
	if res.code != 3 || res.stdout != "{\n  \"daemon\": \"not running\"\n}\n" || res.stderr != want {
		t.Errorf("status --json after the daemon stopped: %s", res)
	}
}
