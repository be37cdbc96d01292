//go:build !vmtest

package netns_test

import (
	"strings"
	"testing"
	"time"
)

// cliWaitIntent: the link wan0 (one end of a veth pair netagent does not
// own, playing a NIC) with an address and routes over it, the way a host's
// uplink is declared.
const cliWaitIntent = `{
  "version": 1,
  "interfaces": [{"name": "wan0", "type": "physical", "addresses": ["192.0.2.10/24"]}],
  "routes": [
    {"to": "default", "via": "192.0.2.1", "dev": "wan0", "metric": 100},
    {"to": "198.51.100.0/24", "dev": "wan0", "scope": "link"}
  ]
}`

// cliWaitEnv adds the pair wan0/wan0-peer, wan0 admin-down (as a NIC the
// intent brings up) and the peer up or down.
func cliWaitEnv(t *testing.T, peerUp bool) (*cliEnv, string) {
	e := cliNewEnv(t)
	e.ip("link", "add", "wan0", "type", "veth", "peer", "name", "wan0-peer")
	if peerUp {
		e.ip("link", "set", "wan0-peer", "up")
	}
	return e, e.writeFile("wan.json", cliWaitIntent)
}

// TestAgentCLIApplyWaitsForCarrier: a one-shot apply that sets a link up
// waits for its carrier, which comes a moment later, and converges in one
// run: the routes over the link are made, exit 0. It returns as soon as
// everything converged, long before its wait ends.
func TestAgentCLIApplyWaitsForCarrier(t *testing.T) {
	e, file := cliWaitEnv(t, true)
	start := time.Now()
	res := e.mustRun(0, "apply", "--wait", "10m", file)
	if took := time.Since(start); took > 5*time.Minute {
		t.Errorf("apply took %v: it slept the wait instead of returning at convergence", took)
	}
	if !strings.Contains(res.stdout, "converged") {
		t.Errorf("apply: %s", res)
	}
	routes := e.ip("route", "show", "dev", "wan0")
	for _, want := range []string{"default via 192.0.2.1", "198.51.100.0/24"} {
		if !strings.Contains(routes, want) {
			t.Errorf("route %q missing after one apply:\n%s", want, routes)
		}
	}
	e.mustRun(0, "check", file)
	e.mustRun(0, "apply", "--wait", "0", file) // a second apply has nothing to do
}

// TestAgentCLIApplyWaitBounded: a link that never gets its carrier (its
// veth peer is down) leaves the routes blocked; apply reports them with
// the reason after the wait (1 s), and at once with --wait 0.
func TestAgentCLIApplyWaitBounded(t *testing.T) {
	e, file := cliWaitEnv(t, false)
	for _, c := range []struct {
		wait     string
		min, max time.Duration
	}{
		{"1s", time.Second, time.Minute},
		{"0", 0, 10 * time.Second}, // less than the default wait: it did not wait
	} {
		start := time.Now()
		res := e.mustRun(1, "apply", "--wait", c.wait, file)
		took := time.Since(start)
		if took < c.min || took > c.max {
			t.Errorf("--wait %s: apply took %v, want between %v and %v", c.wait, took, c.min, c.max)
		}
		if !strings.Contains(res.stderr, "blocked: waiting for link/wan0 (carrier up)") {
			t.Errorf("--wait %s: no blocked route with its reason: %s", c.wait, res)
		}
	}
	if e.link("wan0")["operstate"] == "UP" {
		t.Fatal("wan0 has a carrier although its peer is down")
	}
	// The peer comes up: the next apply converges.
	e.ip("link", "set", "wan0-peer", "up")
	e.mustRun(0, "apply", file)
}
