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

// policyDocs: the routes' file says report; one route overrides it with
// repair, one with ignore. The uplink's file says nothing (repair).
func policyDocs() map[string]string {
	return map[string]string{"10-uplink.json": uplinkDoc, "20-routes.json": `{"version": 1, "drift": "report",
		"routes": [{"to": "198.51.100.0/24", "via": "192.0.2.1", "dev": "uplink0"},
		           {"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "uplink0", "drift": "repair"},
		           {"to": "100.64.0.0/16", "via": "192.0.2.1", "dev": "uplink0", "drift": "ignore"}]}`}
}

var ignoredRef = dg.ItemRef{Type: items.TypeRoute, Name: "main 100.64.0.0/16 metric 0"}

// TestDriftPolicies: someone changes the gateway of three routes by hand.
// The report route (the file's policy) is left as it is, listed in status
// with the intended and the running gateway and counted as found, not
// repaired; the repair route (its own policy) is put back; the ignore
// route is neither put back nor listed nor counted. Put back by hand, the
// report route leaves the list; an intent that changes it writes it.
func TestDriftPolicies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, policyDocs(), func(c *Config) { c.DriftInterval = time.Minute }).start()
		for _, ref := range []dg.ItemRef{routeRef, route2Ref, ignoredRef} {
			if !r.k.has(ref) {
				t.Fatalf("%s not created: a report or ignore object is created like any other", ref)
			}
		}
		time.Sleep(2 * time.Second) // past the check that verifies the first reconcile
		synctest.Wait()
		r.k.takeOps()
		hand := netip.MustParseAddr("192.0.2.9")
		r.k.tamper(func(objs map[dg.ItemRef]dg.Item) {
			for _, ref := range []dg.ItemRef{routeRef, route2Ref, ignoredRef} {
				rt := *objs[ref].(*items.Route)
				rt.Gw = hand
				objs[ref] = &rt
			}
		})
		time.Sleep(time.Minute)
		synctest.Wait()
		ops := r.k.takeOps()
		if want := []string{"modify " + route2Ref.String()}; !slices.Equal(ops, want) {
			t.Errorf("ops %v, want %v: only the repair route put back", ops, want)
		}
		gwOf := func(ref dg.ItemRef) netip.Addr {
			r.k.mu.Lock()
			defer r.k.mu.Unlock()
			return r.k.objects[ref].(*items.Route).Gw
		}
		if gwOf(routeRef) != hand || gwOf(ignoredRef) != hand {
			t.Error("a report or ignore route was put back")
		}
		st := r.status()
		if len(st.Drifted) != 1 {
			t.Fatalf("status lists drifted %+v, want the report route", st.Drifted)
		}
		d := st.Drifted[0]
		if d.Item != routeRef.String() || d.File != "20-routes.json" || d.What != "changed" ||
			!slices.Equal(d.Fields, []status.DriftField{{Field: "Gw", Intended: "192.0.2.1", Running: "192.0.2.9"}}) {
			t.Errorf("drifted %+v", d)
		}
		if !strings.Contains(d.String(), "Gw: intended 192.0.2.1, running 192.0.2.9") {
			t.Errorf("String %q", d.String())
		}
		// The daemon's check lists the report route's gateway, marked, and
		// leaves the ignore route out.
		resp := r.call(api.Request{Command: api.CmdCheck})
		if len(resp.Differs) != 1 || resp.Differs[0].Item != routeRef.String() || resp.Differs[0].Policy != "report" {
			t.Errorf("check: differs %+v", resp.Differs)
		}
		for _, op := range resp.Operations {
			if op.Item == ignoredRef.String() {
				t.Errorf("check lists an operation on the ignore route: %+v", op)
			}
		}
		got := r.scrape()
		wantMetric(t, got, `netagent_drift_found_total{kind="route"}`, 2) // report and repair; not ignore
		wantMetric(t, got, `netagent_drift_repaired_total{kind="route"}`, 1)

		// Later checks repair nothing and keep listing it.
		time.Sleep(time.Minute)
		synctest.Wait()
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Errorf("a later check ran %v", ops)
		}
		if st := r.status(); len(st.Drifted) != 1 {
			t.Errorf("drifted %+v after a second check", st.Drifted)
		}

		// The operator puts it back by hand: no longer listed.
		r.k.tamper(func(objs map[dg.ItemRef]dg.Item) {
			rt := *objs[routeRef].(*items.Route)
			rt.Gw = netip.MustParseAddr("192.0.2.1")
			objs[routeRef] = &rt
		})
		time.Sleep(time.Minute)
		synctest.Wait()
		if st := r.status(); len(st.Drifted) != 0 {
			t.Errorf("drifted %+v after the route was put back", st.Drifted)
		}

		// Deleted by hand: not created again, listed as gone.
		r.k.tamper(func(objs map[dg.ItemRef]dg.Item) { delete(objs, routeRef) })
		time.Sleep(time.Minute)
		synctest.Wait()
		if r.k.has(routeRef) {
			t.Error("a report route deleted by hand was created again")
		}
		if st := r.status(); len(st.Drifted) != 1 || st.Drifted[0].What != "gone" {
			t.Errorf("drifted %+v, want the route gone", st.Drifted)
		}
	})
}

// TestDriftPolicyChangeWritesNothing: making an object report (or back)
// changes no item: nothing is written.
func TestDriftPolicyChangeWritesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs(), func(c *Config) { c.DriftInterval = time.Minute }).start()
		r.k.takeOps()
		r.src.set("20-routes.json", strings.Replace(routeDoc, `"version": 1,`, `"version": 1, "drift": "report",`, 1))
		time.Sleep(time.Second)
		synctest.Wait()
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Errorf("a policy change ran %v", ops)
		}
		r.k.tamper(func(objs map[dg.ItemRef]dg.Item) { delete(objs, routeRef) })
		time.Sleep(time.Minute)
		synctest.Wait()
		if r.k.has(routeRef) {
			t.Error("the route, now report, was created again")
		}
	})
}
