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

// A rollback is judged like an apply: back to a version without the
// protected uplink it is refused (exit 4), records no version and changes
// nothing; with --force it runs as a new version. Back to a version
// without an uplink the current intent marks "protected": true, the
// uplink stays as an orphan.
func TestAgentCLIProtectRollback(t *testing.T) {
	e := cliNewEnv(t)
	noWAN := e.writeIntent("nowan.json", protectIntent(false, false))
	full := e.writeIntent("full.json", protectIntent(true, false))
	e.mustRun(0, "apply", noWAN)
	e.mustRun(0, "apply", full)
	e.ip("link", "set", "wan0-peer", "up")
	before := e.wanView()

	res := e.mustRun(4, "rollback", "--protect", "wan0", "1")
	if !strings.Contains(res.stderr, "interface wan0 would be deleted: wan0 is protected") {
		t.Errorf("the refusal does not say why:\n%s", res)
	}
	if h := e.history(); len(h) != 2 {
		t.Fatalf("a refused rollback made a version: %+v", h)
	}
	if after := e.wanView(); after != before {
		t.Fatalf("a refused rollback changed the uplink:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	e.mustRun(0, "rollback", "--protect", "wan0", "--force", "1")
	if h := e.history(); len(h) != 3 || h[2].Source != "rollback 1" {
		t.Fatalf("history after the forced rollback: %+v", h)
	}
	if out := e.ip("-br", "link"); strings.Contains(out, "wan0@") {
		t.Fatalf("the forced rollback kept wan0: %s", out)
	}

	// The intent protects the uplink: rolling back to a version without
	// it orphans it.
	e.mustRun(0, "apply", e.writeIntent("prot.json", protectIntent(true, true)))
	e.ip("link", "set", "wan0-peer", "up")
	res = e.mustRun(0, "rollback", "1")
	if !strings.Contains(res.stderr+res.stdout, "orphan") {
		t.Errorf("the rollback does not report the orphan:\n%s", res)
	}
	if v := e.wanView(); !strings.Contains(v, "192.0.2.10/24") || !strings.Contains(v, "default via 192.0.2.1") {
		t.Fatalf("the orphaned uplink lost its address or route:\n%s", v)
	}
}
