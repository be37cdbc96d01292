package agent

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

var ownedRouteRef = dg.ItemRef{Type: items.TypeRoute, Name: "main 198.51.100.0/24 metric 0"}

// ownedRig is a rig with the route of routeDoc, an owned objects' watcher
// the test drives and the drift check an hour away, started and past the
// read-back that verifies its first reconcile.
func ownedRig(t *testing.T) (*rig, *fakeLinks) {
	t.Helper()
	w := &fakeLinks{events: make(chan LinkEvent)}
	r := newRig(t, map[string]string{"10-uplink.json": uplinkDoc, "20-routes.json": routeDoc},
		func(c *Config) { c.Owned = w; c.DriftInterval = time.Hour }).start()
	time.Sleep(2 * verifyDelay)
	synctest.Wait()
	if !r.k.has(ownedRouteRef) {
		t.Fatalf("the route was not created: ops %v", r.k.takeOps())
	}
	r.k.takeOps()
	return r, w
}

// TestOwnedEventRepairsAtOnce: the route deleted behind the agent's back
// and the watcher's event: put back within a second (the drift check is
// an hour away); an event with nothing changed writes nothing.
func TestOwnedEventRepairsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, w := ownedRig(t)
		r.k.tamper(func(o map[dg.ItemRef]dg.Item) { delete(o, ownedRouteRef) })
		w.events <- LinkEvent{Names: []string{"route"}}
		time.Sleep(time.Second)
		synctest.Wait()
		if ops := r.k.takeOps(); !slices.Equal(ops, []string{"create " + ownedRouteRef.String()}) {
			t.Fatalf("after the event: ops %v", ops)
		}
		time.Sleep(2 * verifyDelay) // verified
		synctest.Wait()
		checks := r.a.st.ownedChecks
		w.events <- LinkEvent{Names: []string{"route"}}
		time.Sleep(time.Second)
		synctest.Wait()
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Errorf("an event with nothing changed: ops %v", ops)
		}
		if r.a.st.ownedChecks != checks+1 {
			t.Errorf("drift checks by events: %d, want %d", r.a.st.ownedChecks, checks+1)
		}
	})
}

// TestOwnedEventsRateLimited: a stream of events (a writer changing
// netagent's objects all the time) runs at most one drift check every
// ownedMinInterval.
func TestOwnedEventsRateLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, w := ownedRig(t)
		checks := r.a.st.ownedChecks
		for range 100 { // 5 s of events every 50 ms
			w.events <- LinkEvent{Names: []string{"address"}}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		n := r.a.st.ownedChecks - checks
		if limit := int(6*time.Second/ownedMinInterval) + 1; n < 1 || n > limit {
			t.Errorf("%d drift checks for 5 s of events, want 1 to %d", n, limit)
		}
	})
}

// TestOwnedEventsOffWithDriftChecks: with drift checks off, events repair
// nothing either.
func TestOwnedEventsOffWithDriftChecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeLinks{events: make(chan LinkEvent)}
		r := newRig(t, map[string]string{"10-uplink.json": uplinkDoc, "20-routes.json": routeDoc},
			func(c *Config) { c.Owned = w; c.DriftInterval = -1 }).start()
		time.Sleep(2 * verifyDelay)
		synctest.Wait()
		r.k.takeOps()
		r.k.tamper(func(o map[dg.ItemRef]dg.Item) { delete(o, ownedRouteRef) })
		w.events <- LinkEvent{Names: []string{"route"}}
		time.Sleep(time.Second)
		synctest.Wait()
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Errorf("drift checks off, an event: ops %v", ops)
		}
	})
}
