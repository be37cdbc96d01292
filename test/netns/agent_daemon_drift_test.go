//go:build !vmtest

package netns_test

import "testing"

// TestAgentDaemonRepairsDrift: an owned route deleted behind the daemon's
// back comes back with the next drift check; foreign objects stay as they
// are.
func TestAgentDaemonRepairsDrift(t *testing.T) {
	e := daemonNewEnv(t)
	foreignUntouched := e.placeForeign()
	e.converge("--drift-interval", "1s")
	e.ip("route", "del", "198.51.100.0/24", "via", "192.0.2.1", "dev", "uplink0", "metric", "10")
	e.waitFor("the deleted route repaired", func() (bool, string) {
		_, ok := e.route("198.51.100.0/24")
		return ok, e.ip("route")
	})
	if len(e.logs.entries(map[string]string{"msg": "drift: repairing", "item": "198.51.100.0/24"})) == 0 {
		t.Errorf("the repair was not logged as drift\n%s", e.logs.String())
	}
	if len(e.logs.entries(map[string]string{"msg": "reconciling", "reason": "drift"})) == 0 {
		t.Error("no reconcile logged with reason drift")
	}
	foreignUntouched()
}
