package agent

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// TestRollbackKeepsDriftPolicy: the routes' file says "drift": "report"
// (or each route does). Rolled back to an earlier version (an override),
// and again after a restart of the daemon with the rollback in force, the
// report route changed by hand is left as it is and listed, never
// repaired: the version keeps the file's policy (before, its intent lost
// the file's "drift", and the rollback repaired everything).
func TestRollbackKeepsDriftPolicy(t *testing.T) {
	for name, report := range map[string]func(string) string{
		"file": func(doc string) string {
			return strings.Replace(doc, `"version": 1,`, `"version": 1, "drift": "report",`, 1)
		},
		"object": func(doc string) string {
			return strings.ReplaceAll(doc, `"dev": "uplink0"}`, `"dev": "uplink0", "drift": "report"}`)
		},
	} {
		t.Run(name, func(t *testing.T) { testRollbackKeepsDriftPolicy(t, report) })
	}
}

func testRollbackKeepsDriftPolicy(t *testing.T, report func(string) string) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		cfg := func(c *Config) { c.StateDir, c.DriftInterval = dir, time.Minute }
		r := newRig(t, map[string]string{"10-uplink.json": uplinkDoc, "20-routes.json": report(routeDoc)}, cfg).start()
		r.src.set("20-routes.json", report(twoRoutesDoc))
		time.Sleep(DefaultIntentDebounce + time.Millisecond)
		synctest.Wait()
		if resp := r.call(api.Request{Command: api.CmdRollback}); resp.Error != "" || resp.Status.Override == "" || r.k.has(route2Ref) {
			t.Fatalf("rollback: %+v", resp)
		}
		tamperReported(t, r, "after the rollback")
		r.stop()

		r2 := newRig(t, map[string]string{"10-uplink.json": uplinkDoc, "20-routes.json": report(twoRoutesDoc)}, cfg)
		r2.k = r.k
		r2.a.cfg.Kernel = r.k
		r2.start()
		if st := r2.status(); st.Override == "" || r.k.has(route2Ref) {
			t.Fatalf("after a restart: override %q", st.Override)
		}
		tamperReported(t, r2, "after a restart with the rollback in force")
	})
}

// tamperReported changes routeRef's gateway by hand and checks that the
// next drift checks leave it and list it.
func tamperReported(t *testing.T, r *rig, when string) {
	t.Helper()
	time.Sleep(2 * time.Second) // past the check that verifies the last reconcile
	synctest.Wait()
	r.k.takeOps()
	hand := netip.MustParseAddr("192.0.2.9")
	r.k.tamper(func(objs map[dg.ItemRef]dg.Item) {
		rt := *objs[routeRef].(*items.Route)
		rt.Gw = hand
		objs[routeRef] = &rt
	})
	time.Sleep(time.Minute)
	synctest.Wait()
	if ops := r.k.takeOps(); len(ops) != 0 {
		t.Errorf("%s: the drift check ran %v on a report route", when, ops)
	}
	st := r.status()
	if !slices.ContainsFunc(st.Drifted, func(d status.DriftStatus) bool { return d.Item == routeRef.String() }) {
		t.Errorf("%s: drifted %+v, want the report route", when, st.Drifted)
	}
}
