//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/netagent/netagent/agent/api"
)

// TestAgentDaemonSocketAPI: apply over the socket adds to the directory's
// intent without writing to the directory; a rejected apply changes
// nothing; the socket is private.
func TestAgentDaemonSocketAPI(t *testing.T) {
	e := daemonNewEnv(t)
	e.converge()
	if fi, err := os.Stat(e.socket); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode: %v %v", fi.Mode(), err)
	}
	before, _ := os.ReadDir(e.intentDir)

	resp := e.call(api.Request{Command: api.CmdApply, Intent: json.RawMessage(
		`{"version": 1, "routes": [{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0"}]}`)})
	if resp.Error != "" || len(resp.Operations) != 1 || resp.Status == nil || !resp.Status.Ready {
		t.Fatalf("apply: %+v", resp)
	}
	if _, ok := e.route("203.0.113.0/24"); !ok {
		t.Fatal("the applied route is not in the kernel")
	}
	after, _ := os.ReadDir(e.intentDir)
	if len(after) != len(before) {
		t.Errorf("apply wrote to the intent directory: %v", after)
	}

	resp = e.call(api.Request{Command: api.CmdApply, Intent: json.RawMessage(daemonRoutesFile)})
	if resp.Error != "intent rejected" || len(resp.Problems) == 0 {
		t.Errorf("a conflicting apply: %+v", resp)
	}
	if _, ok := e.route("203.0.113.0/24"); !ok {
		t.Error("a rejected apply withdrew the running API intent")
	}
	if resp := e.call(api.Request{Command: api.CmdCheck}); len(resp.Operations) != 0 || resp.Error != "" {
		t.Errorf("check of a converged namespace: %+v", resp)
	}
}
