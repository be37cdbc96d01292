package agent

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/status"
)

// Issue 7: a route with a gateway and no dev stayed while the link its
// gateway is reached through had no carrier, unlike the same route with
// dev. Rendered with the device its gateway resolves to, it is withdrawn
// with the carrier and comes back with it, like TestLinkDownAndUpWithdrawsAndRestores.
func TestRouteWithoutDevFollowsCarrier(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, map[string]string{
			"10-uplink.json": uplinkDoc,
			"20-routes.json": `{"version": 1, "routes": [{"to": "198.51.100.0/24", "via": "192.0.2.1"}]}`,
		}).start()
		if !r.k.has(routeRef) {
			t.Fatalf("the route was not created: ops %v", r.k.takeOps())
		}
		r.k.takeOps()
		r.k.setLink(uplink(2, false))
		r.linkEvent("uplink0")
		time.Sleep(time.Second)
		synctest.Wait()
		if r.k.has(routeRef) {
			t.Fatal("the route without dev stayed while its gateway's link has no carrier")
		}
		if !r.k.has(addrRef) {
			t.Error("the address went with the carrier")
		}
		is := itemNamed(t, r.status(), routeRef)
		if is.State != status.StateBlocked || !strings.Contains(is.BlockedOn, "link/uplink0") || !strings.Contains(is.BlockedOn, "carrier") {
			t.Errorf("route status %+v, want blocked on link/uplink0's carrier", is)
		}
		r.k.setLink(uplink(2, true))
		r.linkEvent("uplink0")
		time.Sleep(time.Second)
		synctest.Wait()
		if !r.k.has(routeRef) {
			t.Fatal("the route did not come back with the carrier")
		}
		if !r.status().Ready {
			t.Error("not ready after the carrier came back")
		}
	})
}
