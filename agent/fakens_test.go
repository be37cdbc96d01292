package agent

import (
	"io"
	"net/netip"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/configurators"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// uplinkFakes are fakes of a namespace with the NIC uplink0 up (as
// uplink(2, true)) and theirs, l3 objects of another tool, and a Runtime
// over them.
func uplinkFakes(t *testing.T, theirs []dg.Item) (*configurators.Fake, *host.Runtime) {
	t.Helper()
	f := configurators.NewFake(nil)
	if err := f.Links.LinkSetUp(f.Links.AddNIC("uplink0", 1500)); err != nil {
		t.Fatal(err)
	}
	for _, it := range theirs {
		if err := f.L3.Plant(it, unix.RTPROT_STATIC); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	rt, err := host.OpenFake(f, t.TempDir(), log)
	if err != nil {
		t.Fatal(err)
	}
	return f, rt
}

// The daemon over the real configurators on fakes of a namespace
// (host.OpenFake) instead of fakeKernel's items: its first reconcile
// puts the documents' address and route in the l3 fake, and status says
// the documents converged.
func TestDaemonOverFakeNamespace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, rt := uplinkFakes(t, nil)
		r := newRig(t, baseDocs(), func(c *Config) { c.Kernel = rt.Kernel() }).start()
		owned := func() []dg.ItemRef {
			t.Helper()
			list, err := f.L3.ReadBack(nil)
			if err != nil {
				t.Fatal(err)
			}
			var refs []dg.ItemRef
			for _, it := range list {
				refs = append(refs, dg.Ref(it))
			}
			return refs
		}
		if got := owned(); !slices.Contains(got, addrRef) || !slices.Contains(got, routeRef) {
			t.Fatalf("the l3 fake holds %v, want %v and %v", got, addrRef, routeRef)
		}
		if st := r.status(); !fileNamed(t, st, "20-routes.json").Conditions[3].Status {
			t.Errorf("20-routes.json status %+v", fileNamed(t, st, "20-routes.json"))
		}
	})
}

// With Config.Adopt (`run --adopt`), the first reconcile takes over the
// address and route another tool made as the documents have them (they
// are netagent's after it, by their marks), and no later reconcile
// adopts: a route someone adds afterwards where a new document puts one
// is refused, and stays theirs.
func TestDaemonAdoptsAtFirstReconcileOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		addr := &items.Address{Dev: "uplink0", Prefix: netip.MustParsePrefix("192.0.2.2/24")}
		route := &items.Route{Dst: netip.MustParsePrefix("198.51.100.0/24"), Gw: netip.MustParseAddr("192.0.2.1"), Dev: "uplink0"}
		later := &items.Route{Dst: netip.MustParsePrefix("203.0.113.0/24"), Gw: netip.MustParseAddr("192.0.2.1"), Dev: "uplink0"}
		f, rt := uplinkFakes(t, []dg.Item{addr, route})
		var calls []bool
		adopt := func(on bool) error { calls = append(calls, on); return rt.SetAdopt(on) }
		r := newRig(t, baseDocs(), func(c *Config) { c.Kernel, c.Adopt = rt.Kernel(), adopt }).start()
		if !slices.Equal(calls, []bool{true, false}) || rt.Adopting() {
			t.Fatalf("Adopt calls %v (adopting now: %v), want on for the first reconcile, then off", calls, rt.Adopting())
		}
		clashes, err := f.L3.Clashes(dg.New("planted", addr, route))
		if err != nil || len(clashes) > 0 {
			t.Errorf("after the first reconcile someone else's still: %v %v", clashes, err)
		}
		if err := f.L3.Plant(later, unix.RTPROT_STATIC); err != nil {
			t.Fatal(err)
		}
		r.src.set("20-routes.json", twoRoutesDoc)
		time.Sleep(DefaultIntentDebounce + time.Millisecond)
		synctest.Wait()
		if clashes, err := f.L3.Clashes(dg.New("later", later)); err != nil || clashes[dg.Ref(later)] == nil {
			t.Errorf("the route planted after the start was adopted: clashes %v %v", clashes, err)
		}
		if st := r.status(); fileNamed(t, st, "20-routes.json").Conditions[3].Status {
			t.Errorf("20-routes.json converged over someone else's route: %+v", fileNamed(t, st, "20-routes.json"))
		}
	})
}
