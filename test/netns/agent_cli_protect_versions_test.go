//go:build !vmtest

package netns_test

import (
	"strings"
	"testing"
)

// Protection is judged before the version is recorded: an apply refused
// for a protected link (exit 4) makes no version, even with a matching
// --if-version; a stale --if-version is a conflict (exit 5) and changes
// nothing either; a forced apply with the right --if-version is a version.
func TestAgentCLIProtectVersions(t *testing.T) {
	e := cliNewEnv(t)
	full := e.writeIntent("full.json", protectIntent(true, false))
	noWAN := e.writeIntent("nowan.json", protectIntent(false, false))
	e.mustRun(0, "apply", full)
	e.ip("link", "set", "wan0-peer", "up")
	before := e.wanView()

	res := e.mustRun(4, "apply", "--protect", "wan0", "--if-version", "1", noWAN)
	if !strings.Contains(res.stderr, "interface wan0 would be deleted: wan0 is protected") {
		t.Errorf("the refusal does not say why:\n%s", res)
	}
	if h := e.history(); len(h) != 1 {
		t.Fatalf("a refused apply made a version: %+v", h)
	}
	res = e.mustRun(5, "apply", "--protect", "wan0", "--force", "--if-version", "0", noWAN)
	if !strings.Contains(res.stderr, "current version is 1, not 0") {
		t.Errorf("the conflict does not say why:\n%s", res)
	}
	if h := e.history(); len(h) != 1 {
		t.Fatalf("a conflicting apply made a version: %+v", h)
	}
	if after := e.wanView(); after != before {
		t.Fatalf("a refused apply changed the uplink:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	e.mustRun(0, "apply", "--protect", "wan0", "--force", "--if-version", "1", noWAN)
	if h := e.history(); len(h) != 2 || h[1].Source != "apply "+noWAN {
		t.Fatalf("history after the forced apply: %+v", h)
	}
}
