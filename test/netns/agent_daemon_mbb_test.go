//go:build !vmtest

package netns_test

import (
	"fmt"
	"slices"
	"testing"
)

// The daemon makes before it breaks, as apply does: an intent file that
// gives the default route a new metric, then moves the uplink to a new
// address, never leaves the host without a default route (the kernel's
// notifications, watched while the daemon reacts, say so).
func TestAgentDaemonMakeBeforeBreakUplink(t *testing.T) {
	e := daemonNewEnv(t)
	uplink := func(addr string, metric int) string {
		return fmt.Sprintf(`{"version": 1,
  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": [%q]}],
  "routes": [{"to": "default", "via": "192.0.2.1", "dev": "uplink0", "metric": %d}]}`, addr, metric)
	}
	e.writeIntent("10-uplink.json", uplink("192.0.2.10/24", 100))
	e.start()
	w := mbbWatch(t, e.tgt, e.ip)
	e.waitFor("the default route", func() (bool, string) {
		r, ok := e.route("default")
		return ok && r.Protocol != "", e.ip("route")
	})
	w.flush()

	e.writeIntent("10-uplink.json", uplink("192.0.2.10/24", 200))
	evs := w.until(func(ev mbbEvent) bool { return ev.String() == "del route default metric 100" })
	evs = append(evs, w.flush()...)
	mbbNeverWithoutDefault(t, evs, "default metric 100")
	if got := mbbKinds(evs, "route"); !slices.Equal(got, []string{"new route default metric 200", "del route default metric 100"}) {
		t.Errorf("metric change: kernel notified %v\n%s", got, e.logs.String())
	}

	e.writeIntent("10-uplink.json", uplink("192.0.2.11/24", 200))
	evs = w.until(func(ev mbbEvent) bool { return ev.String() == "del addr 192.0.2.10/24" })
	evs = append(evs, w.flush()...)
	mbbNeverWithoutDefault(t, evs, "default metric 200")
	if got := mbbKinds(evs, "route"); len(got) != 0 {
		t.Errorf("address change touched the default route: %v\n%s", got, e.logs.String())
	}
	if got := mbbKinds(evs, "addr"); len(got) < 2 || got[0] != "new addr 192.0.2.11/24" || slices.Contains(got, "del addr 192.0.2.11/24") {
		t.Errorf("address change: kernel notified %v", got)
	}
	if !e.hasAddress("192.0.2.11/24") || e.hasAddress("192.0.2.10/24") {
		t.Errorf("uplink0 addresses:\n%s", e.ip("addr", "show", "dev", "uplink0"))
	}
}
