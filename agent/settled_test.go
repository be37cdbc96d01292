package agent

import (
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// Config.Settled is called once the read-back that follows a reconcile
// which changed the kernel finds it all kept; not while the kernel undoes
// a change (that read-back repairs), nor after a periodic drift check
// with nothing written before it; and, with drift checks off, right after
// a reconcile that changed the kernel.
func TestSettledAfterTheVerification(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var at []time.Duration
		t0 := time.Now()
		r := newRig(t, baseDocs(), func(c *Config) {
			c.DriftInterval = time.Hour
			c.Settled = func() { at = append(at, time.Since(t0)) }
		}).start()
		time.Sleep(verifyDelay + time.Millisecond)
		synctest.Wait()
		if len(at) != 1 || at[0] != verifyDelay {
			t.Fatalf("settled at %v after the start, want once at %v (the verification)", at, verifyDelay)
		}

		// A change the kernel undoes once: the verification repairs it, and
		// the one after the repair settles.
		undone := true
		r.k.rewriteWith(route2Ref, func(it dg.Item) dg.Item {
			if !undone {
				return it
			}
			undone = false
			rt := *it.(*items.Route)
			rt.Gw = netip.MustParseAddr("192.0.2.9")
			return &rt
		})
		at, t0 = nil, time.Now()
		r.src.set("20-routes.json", twoRoutesDoc)
		time.Sleep(DefaultIntentDebounce + 3*verifyDelay)
		synctest.Wait()
		if n := len(r.k.writesOf(route2Ref)); n != 2 {
			t.Fatalf("%d writes of the route the kernel undid once, want 2", n)
		}
		if len(at) != 1 || at[0] < DefaultIntentDebounce+2*verifyDelay {
			t.Errorf("settled at %v after the change, want once, after the repair's verification", at)
		}

		// A periodic drift check that finds nothing, with nothing written
		// before it: no call.
		at = nil
		time.Sleep(time.Hour + time.Second)
		synctest.Wait()
		if len(at) != 0 {
			t.Errorf("settled at %v by a periodic drift check", at)
		}
	})
}

func TestSettledWithoutDriftChecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 0
		r := newRig(t, baseDocs(), func(c *Config) {
			c.DriftInterval = -1
			c.Settled = func() { n++ }
		}).start()
		synctest.Wait()
		if n != 1 {
			t.Fatalf("settled %d times after the start, want 1", n)
		}
		r.src.set("20-routes.json", twoRoutesDoc)
		time.Sleep(DefaultIntentDebounce + time.Millisecond)
		synctest.Wait()
		if n != 2 {
			t.Errorf("settled %d times after a change, want 2", n)
		}
	})
}
