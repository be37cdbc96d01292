package agent

import (
	"io"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/configurators"
	dg "github.com/netagent/netagent/depgraph"
)

// The daemon over the real configurators on fakes of a namespace
// (host.OpenFake) instead of fakeKernel's items: its first reconcile
// puts the documents' address and route in the l3 fake, and status says
// the documents converged.
func TestDaemonOverFakeNamespace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := configurators.NewFake(nil)
		if err := f.Links.LinkSetUp(f.Links.AddNIC("uplink0", 1500)); err != nil { // as uplink(2, true)
			t.Fatal(err)
		}
		r := newRig(t, baseDocs(), onFakeNamespace(t, f)).start()
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

// onFakeNamespace is the rig's option that runs the agent over the real
// configurators on the fakes f (host.OpenFake) instead of fakeKernel.
func onFakeNamespace(t *testing.T, f *configurators.Fake) rigOption {
	t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	rt, err := host.OpenFake(f, t.TempDir(), log)
	if err != nil {
		t.Fatal(err)
	}
	return func(c *Config) { c.Kernel = rt.Kernel() }
}
