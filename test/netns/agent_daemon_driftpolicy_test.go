//go:build !vmtest

package netns_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentDaemonDriftReport: the uplink's file says "drift": "report".
// Its MTU changed by hand stays as it is; status lists the interface with
// the intended and the running MTU; `netagent check --via-daemon` lists it
// with the values and exits 1. The routes' file says nothing (repair): a
// route deleted by hand comes back.
func TestAgentDaemonDriftReport(t *testing.T) {
	e := daemonNewEnv(t)
	e.writeIntent("10-uplink.json", `{"version": 1, "drift": "report",
	  "interfaces": [{"name": "uplink0", "type": "physical", "mtu": 1400, "addresses": ["192.0.2.2/24"]}]}`)
	e.writeIntent("20-routes.json", daemonRoutesFile)
	e.start("--drift-interval", "1s")
	if !strings.Contains(e.ip("link", "show", "uplink0"), "mtu 1400") {
		t.Fatalf("the report interface was not configured: %s", e.ip("link", "show", "uplink0"))
	}
	// A change right after netagent's own write is read as the kernel not
	// keeping it (host.Verifier): change it after the check that
	// verifies the start.
	st, err := e.status()
	if err != nil {
		t.Fatal(err)
	}
	e.waitFor("the drift check after the start", func() (bool, string) {
		now, err := e.status()
		return err == nil && now.NextDriftCheck.After(st.NextDriftCheck), now.NextDriftCheck.String()
	})
	e.ip("link", "set", "uplink0", "mtu", "1300")
	e.ip("route", "del", "198.51.100.0/24", "via", "192.0.2.1", "dev", "uplink0", "metric", "10")
	e.waitFor("the MTU listed as drifted and the route repaired", func() (bool, string) {
		st, err := e.status()
		if err != nil {
			return false, err.Error()
		}
		_, routeBack := e.route("198.51.100.0/24")
		for _, d := range st.Drifted {
			if d.Item == "interface/uplink0" && len(d.Fields) == 1 && d.Fields[0].Field == "MTU" &&
				d.Fields[0].Intended == "1400" && d.Fields[0].Running == "1300" {
				return routeBack, e.ip("route")
			}
		}
		return false, e.ip("link", "show", "uplink0")
	})
	if !strings.Contains(e.ip("link", "show", "uplink0"), "mtu 1300") {
		t.Errorf("the report interface was repaired: %s", e.ip("link", "show", "uplink0"))
	}
	res := e.cli("check", "--via-daemon")
	if res.code != 1 || !strings.Contains(res.stdout, "interface/uplink0: MTU: want 1400, have 1300 (drift: report)") {
		t.Errorf("check --via-daemon: want exit 1 naming the MTU, got %s", res)
	}
	if len(e.logs.entries(map[string]string{"msg": "drift: reporting, not repairing", "item": "interface/uplink0"})) == 0 {
		t.Errorf("the drift was not logged\n%s", e.logs.String())
	}
	if !strings.Contains(e.ip("link", "show", "uplink0"), "mtu 1300") {
		t.Errorf("check repaired it: %s", e.ip("link", "show", "uplink0"))
	}
}

// TestAgentCLICheckDriftPolicy: the one-shot check marks the difference
// of a report interface and exits 1; an ignore route's changed gateway is
// a note that does not fail the check; an explicit apply puts back
// everything, whatever its policy.
func TestAgentCLICheckDriftPolicy(t *testing.T) {
	e := cliNewEnv(t)
	file := filepath.Join(t.TempDir(), "uplink.json")
	if err := os.WriteFile(file, []byte(`{"version": 1, "drift": "report",
	  "interfaces": [{"name": "uplink0", "type": "physical", "mtu": 1400, "addresses": ["192.0.2.2/24"]}],
	  "routes": [{"to": "198.51.100.0/24", "via": "192.0.2.1", "dev": "uplink0", "metric": 10, "drift": "ignore"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.mustRun(0, "apply", file)
	e.ip("link", "set", "uplink0", "mtu", "1300")
	e.ip("route", "replace", "198.51.100.0/24", "via", "192.0.2.9", "dev", "uplink0", "metric", "10", "proto", "211") // still netagent's (its protocol)
	res := e.mustRun(1, "check", file)
	if !strings.Contains(res.stdout, "interface/uplink0: MTU: want 1400, have 1300 (drift: report)") ||
		!strings.Contains(res.stdout, "note: route/main 198.51.100.0/24 metric 10: differs, ignored (drift: ignore)") ||
		!strings.Contains(res.stdout, "1 item differs") {
		t.Errorf("check: %s", res)
	}
	e.ip("link", "set", "uplink0", "mtu", "1400")
	if res := e.mustRun(0, "check", file); !strings.Contains(res.stdout, "ignored (drift: ignore)") {
		t.Errorf("check with only the ignore route changed: %s", res)
	}
	e.ip("link", "set", "uplink0", "mtu", "1300")
	e.mustRun(0, "apply", file)
	if !strings.Contains(e.ip("link", "show", "uplink0"), "mtu 1400") || !strings.Contains(e.ip("route", "show", "198.51.100.0/24"), "via 192.0.2.1") {
		t.Errorf("apply did not put everything back: %s %s", e.ip("link", "show", "uplink0"), e.ip("route"))
	}
}
