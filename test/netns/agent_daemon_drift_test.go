//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"
)

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

// daemonBridgeFile is an owned bridge with an MTU and an address.
const daemonBridgeFile = `{"version": 1,
  "interfaces": [{"name": "br0", "type": "bridge", "mtu": 1400, "bridge": {"stp": false}, "addresses": ["10.50.0.1/24"]}]}`

// linkMTU is the MTU of a link as `ip -j link` shows it, and whether it
// is up (IFF_UP).
func (e *daemonEnv) linkMTU(name string) (mtu int, up bool) {
	e.t.Helper()
	var out []struct {
		MTU   int      `json:"mtu"`
		Flags []string `json:"flags"`
	}
	if err := json.Unmarshal([]byte(e.ip("-j", "link", "show", "dev", name)), &out); err != nil || len(out) != 1 {
		e.t.Fatalf("ip -j link show dev %s: %v", name, err)
	}
	return out[0].MTU, slices.Contains(out[0].Flags, "UP")
}

// With drift checks an hour apart, a hand change of an owned link that
// its link event shows (an MTU, the link set down) is repaired at once:
// the daemon reads the links back after the event, not at the next drift
// check; events of links it does not own are not read back.
func TestAgentDaemonRepairsOwnedLinkOnItsEvent(t *testing.T) {
	e := daemonNewEnv(t)
	e.writeIntent("30-bridge.json", daemonBridgeFile)
	e.converge("--drift-interval", "1h")
	if mtu, up := e.linkMTU("br0"); mtu != 1400 || !up {
		t.Fatalf("br0's MTU after start: %d", mtu)
	}
	time.Sleep(1500 * time.Millisecond) // the verification read-back 1 s after the start's reconcile is over
	e.ip("link", "set", "dev", "br0", "mtu", "1300")
	e.waitForWithin(5*time.Second, "br0's MTU repaired", func() (bool, string) {
		mtu, _ := e.linkMTU("br0")
		return mtu == 1400, fmt.Sprint("mtu ", mtu)
	})
	e.ip("link", "set", "dev", "br0", "down")
	e.waitForWithin(5*time.Second, "br0 set up again", func() (bool, string) {
		_, up := e.linkMTU("br0")
		return up, e.ip("link", "show", "dev", "br0")
	})
	if len(e.logs.entries(map[string]string{"msg": "drift: repairing", "item": "interface/br0"})) == 0 {
		t.Errorf("the repair was not logged as drift\n%s", e.logs.String())
	}
	if st := e.mustStatus(); !st.Ready {
		t.Errorf("not ready after the repairs: %+v", st)
	}
}

// SIGHUP reads the kernel back and repairs what someone changed (a route
// deleted, a link's MTU), with drift checks an hour apart.
func TestAgentDaemonReloadRepairsDrift(t *testing.T) {
	e := daemonNewEnv(t)
	e.writeIntent("30-bridge.json", daemonBridgeFile)
	e.converge("--drift-interval", "1h")
	time.Sleep(1500 * time.Millisecond) // the verification read-back after the start is over
	e.ip("route", "del", "198.51.100.0/24", "via", "192.0.2.1", "dev", "uplink0", "metric", "10")
	e.ip("addr", "del", "10.50.0.1/24", "dev", "br0")
	if _, ok := e.route("198.51.100.0/24"); ok {
		t.Fatal("the route is still there")
	}
	e.cmd.Process.Signal(syscall.SIGHUP)
	e.waitForWithin(5*time.Second, "the route and the address repaired by the reload", func() (bool, string) {
		_, ok := e.route("198.51.100.0/24")
		return ok && e.hasAddressOn("br0", "10.50.0.1/24"), e.ip("route") + e.ip("addr")
	})
	if len(e.logs.entries(map[string]string{"msg": "reconciling", "reason": "reload"})) == 0 {
		t.Errorf("no reconcile logged with reason reload\n%s", e.logs.String())
	}
}
