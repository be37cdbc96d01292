package agent

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// A kernel that does not keep a change (it keeps its own label on the
// address, whatever is written): the one-shot apply (host.Converge) and
// the daemon drive it by the same rule. Both write it once, read it back,
// write it again at once, and, found undone a second time, report it as
// not converging with what the kernel holds; the route next to it, which
// the kernel keeps, converges in both. (The one-shot apply used to write
// it three times and say only "still a modify after 3 passes".)
func TestUnkeptChangeSameInOneShotAndDaemon(t *testing.T) {
	kernelLabel := func(it dg.Item) dg.Item {
		a := *it.(*items.Address)
		a.Label = "uplink0:k"
		return &a
	}
	synctest.Test(t, func(t *testing.T) {
		// The daemon, up to the read-back after its second write.
		r := newRig(t, baseDocs(), func(c *Config) {
			c.Rand = func() float64 { return 0 }
			c.DriftInterval = time.Hour
		})
		r.k.rewriteWith(addrRef, kernelLabel)
		r.start()
		time.Sleep(2*verifyDelay + 10*time.Millisecond)
		synctest.Wait()
		daemonWrites := len(r.k.writesOf(addrRef))
		st := r.status()
		is, route := itemNamed(t, st, addrRef), itemNamed(t, st, routeRef)
		r.stop()
		intended := r.a.st.intended

		// The one-shot apply of the same intent on a fresh kernel.
		k := newFakeKernel(uplink(2, true))
		k.rewriteWith(addrRef, kernelLabel)
		res, err := host.Converge(context.Background(), k, intended)
		if err != nil {
			t.Fatal(err)
		}
		oneShotWrites := len(k.writesOf(addrRef))

		want := 1 + host.RewritesAtOnce
		if daemonWrites != want || oneShotWrites != want {
			t.Errorf("writes of the address: daemon %d, one-shot %d, want %d each", daemonWrites, oneShotWrites, want)
		}
		if len(res.Problems) != 1 || res.Problems[0].Ref != addrRef || !res.Problems[0].Unkept {
			t.Fatalf("one-shot problems %v", res.Problems)
		}
		p := res.Problems[0]
		if is.State != status.StateNotConverging || is.Failures != want || is.LastError != p.Reason ||
			!strings.HasPrefix(p.Reason, "the kernel did not keep the change: ") || !strings.Contains(p.Reason, "uplink0:k") {
			t.Errorf("daemon status %+v\none-shot problem %q", is, p)
		}
		if got := p.String(); !strings.HasPrefix(got, addrRef.String()+": not-converging: the kernel did not keep") {
			t.Errorf("problem renders as %q", got)
		}
		if route.State != dg.StateCreated.String() || !k.has(routeRef) {
			t.Errorf("the route: daemon %s, one-shot in kernel %v", route.State, k.has(routeRef))
		}
		if got, _ := res.Current.Get(addrRef); got == nil || got.(*items.Address).Label != "uplink0:k" {
			t.Errorf("one-shot current state holds %v, not the kernel's version", got)
		}
	})
}

// A change the kernel undoes once, as a side effect, is written again and
// converges, in the one-shot apply as in the daemon: nothing to report.
func TestUndoneOnceConvergesOneShot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs())
		r.start()
		r.stop()
		intended := r.a.st.intended

		k := newFakeKernel(uplink(2, true))
		once := true
		k.rewriteWith(addrRef, func(it dg.Item) dg.Item {
			if once {
				once = false
				a := *it.(*items.Address)
				a.Label = "uplink0:k"
				return &a
			}
			return it
		})
		res, err := host.Converge(context.Background(), k, intended)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Converged() || len(k.writesOf(addrRef)) != 2 {
			t.Fatalf("problems %v, writes %d", res.Problems, len(k.writesOf(addrRef)))
		}
	})
}
