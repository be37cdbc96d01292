//go:build !vmtest

package netns_test

import (
	"strings"
	"testing"
)

// nftTimeoutIntent has a set filled at runtime (default timeout 1h, no
// declared elements) and a set of the timeout flag alone with declared,
// permanent elements.
const nftTimeoutIntent = `{"version": 1, "nftables": {"tables": [{"family": "inet", "name": "netagent",
  "sets": [{"name": "banned", "type": "ipv4_addr", "timeout": "1h"},
           {"name": "allow", "type": "ipv4_addr", "timeout": "0s", "elements": ["192.0.2.1"]}],
  "chains": [{"name": "input", "type": "filter", "hook": "input", "priority": 0, "rules": [
    {"saddr": "@banned", "verdict": "drop"}, {"saddr": "@allow", "verdict": "accept"}]}]}]}}`

// A set's timeout is the kernel's timeout flag and default; elements
// another tool adds with a timeout are not drift and survive applies; an
// element added without one in the flag-only set is drift; a set with a
// default timeout and declared elements is refused with its JSON path.
func TestNftablesSetTimeout(t *testing.T) {
	e := cliNewEnv(t)
	file := e.writeFile("nft.json", nftTimeoutIntent)
	e.mustRun(0, "apply", file)
	listed := e.exec("nft", "list", "table", "inet", "netagent")
	for _, want := range []string{"set banned {\n\t\ttype ipv4_addr\n\t\ttimeout 1h\n", "set allow {\n\t\ttype ipv4_addr\n\t\tflags timeout\n\t\telements = { 192.0.2.1 }"} {
		if !strings.Contains(listed, want) {
			t.Errorf("nft list lacks %q:\n%s", want, listed)
		}
	}
	if res := e.mustRun(0, "apply", file); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply wrote: %s", res)
	}

	// Another tool fills the sets at runtime, with timeouts.
	e.exec("nft", "add element inet netagent banned { 203.0.113.5 }; add element inet netagent allow { 198.51.100.9 timeout 10m }")
	e.mustRun(0, "check", file)
	if res := e.mustRun(0, "apply", file); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("apply over runtime elements wrote: %s", res)
	}
	listed = e.exec("nft", "list", "table", "inet", "netagent")
	if !strings.Contains(listed, "203.0.113.5 expires") || !strings.Contains(listed, "198.51.100.9 timeout 10m expires") {
		t.Errorf("the runtime elements did not survive the apply:\n%s", listed)
	}

	// An element without a timeout in the flag-only set is the intent's
	// business: drift, removed by apply, the runtime ones kept.
	e.exec("nft", "add element inet netagent allow { 198.51.100.10 }")
	res := e.mustRun(1, "check", file)
	if !strings.Contains(res.stdout, "set allow elements: want none, have 198.51.100.10 (not intended)") {
		t.Errorf("check does not name the permanent element added behind netagent's back:\n%s", res)
	}
	e.mustRun(0, "apply", file)
	listed = e.exec("nft", "list", "table", "inet", "netagent")
	if strings.Contains(listed, "198.51.100.10") || !strings.Contains(listed, "198.51.100.9 timeout") || !strings.Contains(listed, "192.0.2.1") {
		t.Errorf("apply did not remove only the permanent stray element:\n%s", listed)
	}

	bad := e.writeFile("bad.json", strings.Replace(nftTimeoutIntent, `"timeout": "1h"`, `"timeout": "1h", "elements": ["192.0.2.7"]`, 1))
	res = e.mustRun(1, "validate", bad)
	if !strings.Contains(res.stdout+res.stderr, "nftables.tables[0].sets[0].elements") {
		t.Errorf("validate of a timeout set with declared elements: %s", res)
	}
}
