//go:build !vmtest

package netns_test

import (
	"strings"
	"testing"
)

// Unnumbered point-to-point links: the router's address as a host address
// (/32) on two links, with a route over each. The kernel holds the same
// address on both; apply converges, a second apply writes nothing, check
// is clean, and removing the intent removes both.
func TestAgentCLIUnnumberedHostAddress(t *testing.T) {
	e := cliNewEnv(t)
	file := e.writeFile("unnumbered.json", `{"version": 1,
  "interfaces": [
    {"name": "uplink0", "type": "physical", "addresses": ["10.255.0.1/32"]},
    {"name": "p2p1", "type": "veth", "veth": {"peer": "p2p1-peer"}, "addresses": ["10.255.0.1/32"]}
  ],
  "routes": [
    {"to": "10.1.0.0/16", "dev": "uplink0", "scope": "link"},
    {"to": "10.2.0.0/16", "dev": "p2p1", "scope": "link"}
  ]}`)
	e.mustRun(0, "validate", file)
	e.mustRun(0, "apply", file)
	for _, dev := range []string{"uplink0", "p2p1"} {
		if got := e.ip("-4", "addr", "show", "dev", dev); !strings.Contains(got, "10.255.0.1/32") {
			t.Errorf("%s addresses:\n%s", dev, got)
		}
	}
	if res := e.mustRun(0, "apply", file); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply: %s", res)
	}
	e.mustRun(0, "check", file)
	e.mustRun(0, "apply", e.writeFile("empty.json", `{"version": 1}`))
	if got := e.ip("-4", "addr", "show"); strings.Contains(got, "10.255.0.1") {
		t.Errorf("after removal:\n%s", got)
	}
}
