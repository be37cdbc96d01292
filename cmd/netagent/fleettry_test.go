//go:build !nofleet

package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/internal/etcdtest"
)

// TestFleetPushTry: push --try stores a trial envelope of the validated
// document (timeout, probes); a bad probe or timeout writes nothing; a
// trial in a directory is merged by its intent when the next push is
// validated.
func TestFleetPushTry(t *testing.T) {
	e := newFleetEnv(t, etcdtest.Options{})
	base := writeIntent(t, "base.json", fleetBase)
	if code, _, errOut := e.fleet("push", "--group", "edge", "--try", "--probe", "nope:x", base); code == exitOK || !strings.Contains(errOut, "--probe nope:x") {
		t.Errorf("push --try with a bad probe: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := e.fleet("push", "--group", "edge", "--try", "--trial-timeout", "0s", base); code == exitOK || !strings.Contains(errOut, "--trial-timeout") {
		t.Errorf("push --try with a zero timeout: exit %d\n%s", code, errOut)
	}
	if got := e.keys(t); len(got) != 0 {
		t.Fatalf("a refused trial push wrote %v", got)
	}

	code, _, errOut := e.fleet("push", "--group", "edge", "--try", "--trial-timeout", "90s", "--probe", "ping:192.0.2.1", "--probe", "tcp:192.0.2.1:22", base)
	if code != exitOK || !strings.Contains(errOut, "on trial for 1m30s with 2 probes") {
		t.Fatalf("push --try: exit %d\n%s", code, errOut)
	}
	en := e.read(t, "/fleet/groups/edge/base.json")
	env, timeout, err := member.ParseTrialEnvelope(en.Value)
	var want bytes.Buffer
	json.Compact(&want, []byte(fleetBase))
	if err != nil || timeout.String() != "1m30s" || len(env.Trial.Probes) != 2 || env.Trial.Probes[1] != "tcp:192.0.2.1:22" ||
		!bytes.Equal(env.Intent, want.Bytes()) {
		t.Errorf("stored %s: %+v %v %v", en.Value, env, timeout, err)
	}

	// The trial's eth0 conflicts with the next document's.
	dup := writeIntent(t, "dup.json", `{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "mtu": 9000}]}`)
	code, _, errOut = e.fleet("push", "--group", "edge", dup)
	if code != exitFailed || !strings.Contains(errOut, `is also defined at interfaces[0] in groups/edge/base.json`) || strings.Contains(errOut, "invalid itself") {
		t.Errorf("push next to a trial: exit %d\n%s", code, errOut)
	}
}
