//go:build !vmtest

package netns_test

import (
	"fmt"
	"strings"
	"testing"
)

// foreignTrialEnv is a namespace where netagent owns the vxlan lan0
// (fd50::1/64; a vxlan has carrier, so the kernel's IPv6 objects on it do
// not depend on a bridge's carrier settling) and the bridge lan1
// (10.51.0.1/24, 10.52.0.1/24), and someone else
// put objects on them that the kernel drops by itself when lan0 is
// recreated or set down, or when lan1 loses 10.52.0.1/24: static routes
// through lan0 (main table, table 300 with a metric, IPv6 via a gateway,
// a multipath route with a nexthop on uplink0), permanent neighbours of
// both families on lan0, a rule naming lan0, and a route through lan1
// whose source is 10.52.0.1; a route through uplink0, which no trial
// touches, is there too. (An IPv4 address on lan0 would make netagent
// refuse to recreate it: the address configurator keeps the last IPv4
// address of a link with others' routes on it.) It returns the trials:
// lan0 recreated (another VNI) and lan1 without its second address; lan0
// set down.
func foreignTrialEnv(t *testing.T) (e *cliEnv, recreate, down string) {
	e = cliNewEnv(t)
	intent := func(lan0, lan1addrs string) string {
		return `{"version": 1, "interfaces": [` + lan0 + `,
  {"name": "lan1", "type": "bridge", "mac": "02:00:00:00:51:01", "bridge": {"stp": false}, "addresses": [` + lan1addrs + `]}]}`
	}
	vxlan := func(vni int, state string) string {
		return fmt.Sprintf(`{"name": "lan0", "type": "vxlan", "mac": "02:00:00:00:50:01", "vxlan": {"vni": %d, "local": "192.0.2.10", "port": 4789}%s, "addresses": ["fd50::1/64"]}`, vni, state)
	}
	both := `"10.51.0.1/24", "10.52.0.1/24"`
	before := e.writeFile("before.json", intent(vxlan(500, ""), both))
	recreate = e.writeFile("recreate.json", intent(vxlan(501, ""), `"10.51.0.1/24"`))
	down = e.writeFile("down.json", intent(vxlan(500, `, "state": "down"`), both))
	e.ip("addr", "add", "192.0.2.10/24", "dev", "uplink0")
	e.mustRun(0, "apply", before)
	for _, cmd := range [][]string{
		{"route", "add", "10.60.0.0/16", "dev", "lan0"},
		{"route", "add", "10.61.0.0/16", "dev", "lan0", "table", "300", "proto", "static", "metric", "7"},
		{"route", "add", "10.63.0.0/16", "proto", "42", "nexthop", "dev", "lan0", "nexthop", "via", "192.0.2.1", "dev", "uplink0"},
		{"-6", "route", "add", "fd60::/48", "via", "fd50::9", "dev", "lan0", "proto", "static"},
		{"-6", "route", "add", "fd61::/48", "dev", "lan0", "table", "300"},
		{"route", "add", "10.62.0.0/16", "via", "10.52.0.9", "dev", "lan1", "src", "10.52.0.1", "proto", "static"},
		{"route", "add", "10.70.0.0/16", "via", "192.0.2.1", "dev", "uplink0", "proto", "static"},
		{"neigh", "add", "10.60.0.9", "lladdr", "02:00:00:00:50:09", "dev", "lan0", "nud", "permanent"},
		{"-6", "neigh", "add", "fd50::9", "lladdr", "02:00:00:00:50:09", "dev", "lan0", "nud", "permanent"},
		{"rule", "add", "iif", "lan0", "lookup", "300", "pref", "500"},
	} {
		e.ip(cmd...)
	}
	return e, recreate, down
}

// A trial that recreates a link or sets it down makes the kernel drop
// someone else's routes and permanent neighbours with it; its revert
// puts every one of them back, exactly (the kernel's own routes come
// back with the addresses, once).
func TestTrialRevertRestoresForeignObjects(t *testing.T) {
	e, recreate, down := foreignTrialEnv(t)
	want := e.trialSnapshot()
	for _, trial := range []string{recreate, down} {
		name := strings.TrimSuffix(trial[strings.LastIndex(trial, "/")+1:], ".json")
		t.Run(name, func(t *testing.T) {
			e.t = t
			res := e.trialRun(nil, "--timeout", "0s", trial)
			if res.code != 6 {
				t.Fatalf("want exit 6 (not confirmed), got %s", res)
			}
			if got := e.trialSnapshot(); got != want {
				t.Fatalf("the revert is not exact:\n%s\n%s", lineDiff(want, got), res)
			}
		})
	}
}

// TestTrialForeignKillPoints kills those trials (SIGKILL at kill points
// spread over their apply and their revert); after `netagent recover`
// the foreign objects are back, exactly.
func TestTrialForeignKillPoints(t *testing.T) {
	e, recreate, down := foreignTrialEnv(t)
	want := e.trialSnapshot()
	for _, trial := range []string{recreate, down} {
		full := e.trialRun([]string{"NETAGENT_TEST_KILL_AFTER=100000000"}, "--timeout", "0s", trial)
		if full.code != 6 {
			t.Fatalf("the whole trial %s: want exit 6, got %s", trial, full)
		}
		apply, all := killPoints(t, full)
		points := append(spread(1, apply, 5), spread(apply+1, all, 4)...)
		t.Logf("%s: kill points: %d in the apply, %d in the revert; trying %v", trial, apply, all-apply, points)
		for _, k := range points {
			res := e.trialRun([]string{fmt.Sprintf("NETAGENT_TEST_KILL_AFTER=%d", k)}, "--timeout", "0s", trial)
			if res.code != -1 {
				t.Fatalf("kill point %d: the trial was not killed: %s", k, res)
			}
			rec := e.run(nil, "--state-dir", e.stateDir, "recover", "--netns", e.tgt.Name)
			if rec.code != 0 || !strings.Contains(rec.stderr, "reverted the pending trial") {
				t.Fatalf("recover after kill point %d: %s", k, rec)
			}
			if got := e.trialSnapshot(); got != want {
				t.Fatalf("%s: after kill point %d of %d (apply %d), recover is not exact:\n%s", trial, k, all, apply, lineDiff(want, got))
			}
		}
	}
}
