package agent

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items/lease4"
)

// graphText lists a graph's items in order, each with its subgraph, its
// description and its dependencies.
func graphText(g *dg.Graph) string {
	var b strings.Builder
	for _, ref := range g.Refs() {
		it, _ := g.Get(ref)
		scope, _ := g.ScopeOf(ref)
		fmt.Fprintf(&b, "%s [%s] %s\n", ref, scope, it)
		for _, d := range g.Dependencies(ref) {
			fmt.Fprintf(&b, "  needs %s\n", d)
		}
	}
	return b.String()
}

// renderDocs renders documents as the full path does.
func renderDocs(t *testing.T, docs map[string]string) (*dg.Graph, render.DriftPolicies) {
	t.Helper()
	files := map[string]*intent.Intent{}
	for n, d := range docs {
		in, err := intent.Parse([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = in
	}
	g, err := render.RenderFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	p, err := render.DriftOf(files)
	if err != nil {
		t.Fatal(err)
	}
	return g, p
}

// editsOnTheirOwn counts the log lines of edits adoptEdit rendered.
func (r *rig) editsOnTheirOwn() int {
	n := 0
	for _, e := range r.hook.AllEntries() {
		if e.Message == "intent edit rendered on its own" {
			n++
		}
	}
	return n
}

// TestAdoptEditMatchesFullRender edits the routes of a document at random
// (changed, added, removed; now and then an invalid route, which is
// rejected, or an on-link one, which the full path renders): after each
// edit the intended graph must be the one rendered from the accepted
// documents, the kernel must hold its routes, and route-only edits must
// have been rendered on their own.
func TestAdoptEditMatchesFullRender(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rnd := rand.New(rand.NewPCG(1, 10))
		routes := []string{}
		for i := range 20 {
			routes = append(routes, fmt.Sprintf(`{"to": "10.0.%d.0/24", "via": "192.0.2.1"}`, i))
		}
		doc := func() string { return `{"version": 1, "routes": [` + strings.Join(routes, ",") + `]}` }
		docs := map[string]string{"10-uplink.json": uplinkDoc, "20-routes.json": doc()}
		r := newRig(t, docs).start()
		accepted := doc()
		fast := 0
		for i := range 40 {
			prev := append([]string(nil), routes...)
			k := rnd.IntN(len(routes))
			switch rnd.IntN(6) {
			case 0:
				routes[k] = fmt.Sprintf(`{"to": "10.0.%d.0/24", "via": "2001:db8::1"}`, 100+i) // invalid
			case 1:
				routes = append(routes, fmt.Sprintf(`{"to": "10.1.%d.0/24", "via": "192.0.2.%d", "metric": %d}`, i, 1+rnd.IntN(3), rnd.IntN(2)))
			case 2:
				routes = append(routes[:k], routes[k+1:]...)
			case 3:
				routes[k] = fmt.Sprintf(`{"to": "203.0.%d.0/24", "dev": "uplink0"}`, i) // on-link
			default:
				routes[k] = fmt.Sprintf(`{"to": "10.2.%d.0/24", "via": "192.0.2.1", "drift": "report"}`, i)
			}
			before := r.editsOnTheirOwn()
			r.src.setRenamed("20-routes.json", doc())
			time.Sleep(DefaultIntentSettle + time.Millisecond)
			synctest.Wait()
			if strings.Contains(doc(), "2001:db8::1") {
				routes = prev // rejected: the last good version stays
			} else {
				accepted = doc()
			}
			want, policies := renderDocs(t, map[string]string{"10-uplink.json": uplinkDoc, "20-routes.json": accepted})
			if got, want := graphText(r.a.st.intended), graphText(want); got != want {
				t.Fatalf("edit %d: intended graph\n%s\nwant the full render\n%s", i, got, want)
			}
			if got := r.a.st.policy.adopted; len(got)+len(policies) > 0 && !maps.Equal(got, policies) {
				t.Fatalf("edit %d: drift policies %v, want %v", i, got, policies)
			}
			for _, ref := range want.Refs() {
				if ref.Type == "route" && !r.k.has(ref) {
					t.Fatalf("edit %d: %s not in the kernel", i, ref)
				}
			}
			if r.editsOnTheirOwn() > before {
				fast++
			}
		}
		t.Logf("%d of 40 edits rendered on their own", fast)
		if fast < 10 {
			t.Errorf("%d of 40 edits rendered on their own", fast)
		}
	})
}

// tallyBoth counts the items' states by status.EachItemState and, item by
// item, by status.ItemState.
func tallyBoth(a *Agent) (fast, slow status.Tallies) {
	fast, slow = status.Tallies{}, status.Tallies{}
	in := a.snapshot()
	status.EachItemState(in, fast.Add)
	status.EachItem(in, func(ref dg.ItemRef) {
		file, state, why := status.ItemState(in, ref)
		slow.Add(file, ref, state, why)
	})
	return fast, slow
}

// TestEachItemStateIsItemState: the walk over nodes gives the tallies the
// lookups by reference give, with items converged, failed (a dependant
// then blocked), pending, and on their way out.
func TestEachItemStateIsItemState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, map[string]string{"10-uplink.json": uplinkDoc, "20-routes.json": twoRoutesDoc}).start()
		check := func(when string) {
			t.Helper()
			fast, slow := tallyBoth(r.a)
			if len(fast) == 0 || !reflect.DeepEqual(fast, slow) {
				t.Errorf("%s: eachItemState tallies %v, itemState's %v", when, describeTallies(fast), describeTallies(slow))
			}
		}
		check("converged")
		r.k.failNext(route2Ref, 100)
		r.src.setRenamed("20-routes.json", routeDoc)
		time.Sleep(DefaultIntentSettle + time.Millisecond)
		synctest.Wait()
		check("a route failing to be deleted")
		r.k.failNext(addrRef, 100)
		r.src.setRenamed("10-uplink.json", strings.Replace(uplinkDoc, "192.0.2.2/24", "192.0.2.3/24", 1))
		time.Sleep(DefaultIntentSettle + time.Millisecond)
		synctest.Wait()
		check("an address failing")
		r.k.failNext(routeRef, 100)
		r.src.setRenamed("20-routes.json", strings.Replace(routeDoc, "192.0.2.1", "192.0.2.3", 1))
		time.Sleep(DefaultIntentSettle + time.Millisecond)
		synctest.Wait()
		check("a route failing to change")
	})
}

func describeTallies(ts status.Tallies) string {
	var b strings.Builder
	for _, f := range slices.Sorted(maps.Keys(ts)) {
		fmt.Fprintf(&b, "%s: %+v; ", f, *ts[f])
	}
	return b.String()
}

// TestAdoptEditRendersWithTheSameLeases: an edit after the leases changed
// without the graph being rendered again with them is rendered whole;
// the next, with the leases the graph was rendered with, on its own.
func TestAdoptEditRendersWithTheSameLeases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs()).start()
		// The graph was rendered with a lease no longer in use (the leases
		// changed since): the leases in use differ from those it was
		// rendered with.
		r.a.st.renderedWith = map[string]*lease4.Lease{"uplink0": {Interface: "uplink0",
			Address: netip.MustParsePrefix("10.77.0.100/24"), Router: netip.MustParseAddr("10.77.0.1")}}
		for i, doc := range []string{twoRoutesDoc, routeDoc} {
			before := r.editsOnTheirOwn()
			r.src.setRenamed("20-routes.json", doc)
			time.Sleep(DefaultIntentSettle + time.Millisecond)
			synctest.Wait()
			if onItsOwn := r.editsOnTheirOwn() > before; onItsOwn != (i == 1) {
				t.Errorf("edit %d rendered on its own: %v, want %v", i, onItsOwn, i == 1)
			}
			if want, _ := renderDocs(t, map[string]string{"10-uplink.json": uplinkDoc, "20-routes.json": doc}); graphText(r.a.st.intended) != graphText(want) {
				t.Errorf("edit %d: intended graph\n%s\nwant\n%s", i, graphText(r.a.st.intended), graphText(want))
			}
		}
	})
}
