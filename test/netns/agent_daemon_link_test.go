//go:build !vmtest

package netns_test

import (
	"fmt"
	"testing"
)

// TestAgentDaemonFollowsTheUplink: the route through uplink0 is withdrawn
// when the uplink loses its carrier and when it disappears, shows as
// blocked in status, and comes back by itself with the carrier and with a
// new uplink of the same name.
func TestAgentDaemonFollowsTheUplink(t *testing.T) {
	e := daemonNewEnv(t)
	e.converge()

	// Carrier lost: the peer goes down.
	e.ip("link", "set", "uplink0-peer", "down")
	e.waitForBlockedRoute("the carrier loss")
	if !e.hasAddress("192.0.2.2/24") {
		t.Error("the address went with the carrier: only the route depends on it")
	}
	e.ip("link", "set", "uplink0-peer", "up")
	e.waitForRestoredRoute("the carrier's return")

	// The uplink disappears and comes back (a new ifindex).
	e.ip("link", "del", "uplink0")
	e.waitForBlockedRoute("the uplink's removal")
	e.addUplink()
	e.waitForRestoredRoute("the uplink's return")
	if !e.hasAddress("192.0.2.2/24") {
		t.Error("the address did not come back with the uplink")
	}
	if len(e.logs.entries(map[string]string{"msg": "reconciling", "reason": "link"})) == 0 {
		t.Error("no reconcile logged with reason link")
	}
}

func (e *daemonEnv) waitForBlockedRoute(after string) {
	e.t.Helper()
	e.waitFor("the route withdrawn and blocked after "+after, func() (bool, string) {
		st, err := e.status()
		if err != nil {
			return false, err.Error()
		}
		it, _ := daemonItem(st, daemonRouteRef)
		_, inKernel := e.route("198.51.100.0/24")
		return !inKernel && it.State == "blocked" && it.BlockedOn != "", fmt.Sprintf("kernel %v, status %+v", inKernel, it)
	})
}

func (e *daemonEnv) waitForRestoredRoute(after string) {
	e.t.Helper()
	e.waitFor("the route restored after "+after, func() (bool, string) {
		st, err := e.status()
		if err != nil {
			return false, err.Error()
		}
		r, ok := e.route("198.51.100.0/24")
		return ok && r.Gateway == "192.0.2.1" && st.Ready, fmt.Sprintf("kernel %+v %v, ready %v", r, ok, st.Ready)
	})
}

// TestAgentDaemonUplinkFlaps: the uplink's carrier flaps many times in a
// row, faster than the daemon reconciles. Whatever it saw in between, the
// daemon ends where the last state says: the route withdrawn and blocked
// when the flapping ends down, restored and Ready when it ends up.
func TestAgentDaemonUplinkFlaps(t *testing.T) {
	e := daemonNewEnv(t)
	e.converge()
	flap := func(n int, last string) {
		for range n {
			e.ip("link", "set", "uplink0-peer", "down")
			e.ip("link", "set", "uplink0-peer", "up")
		}
		e.ip("link", "set", "uplink0-peer", last)
	}
	flap(20, "down")
	e.waitForBlockedRoute("20 flaps ending down")
	flap(20, "up")
	e.waitForRestoredRoute("20 flaps ending up")
	if !e.hasAddress("192.0.2.2/24") {
		t.Error("the address went with the flapping carrier")
	}
}
