//go:build !vmtest

package netns_test

import (
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
	// keeping it (target.Verifier): change it after the check that
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
