package agent

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// TestRetryBackoffTiming drives a route whose create fails five times and
// checks that each retry comes after the backoff's delay: 50, 100, 200,
// 400, 800 ms with the jitter pinned at its lowest (half the nominal).
func TestRetryBackoffTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs(), func(c *Config) { c.Rand = func() float64 { return 0 } })
		r.k.failNext(routeRef, 5)
		r.start()
		start := time.Now()
		var at []time.Duration
		for range 5 {
			runs := r.k.reconciles()
			for r.k.reconciles() == runs {
				time.Sleep(time.Millisecond)
				synctest.Wait()
			}
			at = append(at, time.Since(start))
		}
		want := []time.Duration{50, 150, 350, 750, 1550} // cumulative
		for i := range want {
			want[i] *= time.Millisecond
		}
		if !slices.Equal(at, want) {
			t.Errorf("retries at %v, want %v", at, want)
		}
		if !r.k.has(routeRef) {
			t.Fatal("the route was not created by the fifth retry")
		}
		st := r.status()
		if !st.NextRetry.IsZero() {
			t.Errorf("a retry is still scheduled at %v after success", st.NextRetry)
		}
		if !st.Ready {
			t.Error("not ready after the retries succeeded")
		}
		runs := r.k.reconciles()
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if got := r.k.reconciles() - runs; got != 0 { // two drift checks, nothing drifted
			t.Errorf("%d reconciles in 10 idle minutes, want 0", got)
		}
		for _, reason := range r.reasons()[1:6] {
			if reason != reasonRetry {
				t.Errorf("reasons %v, want retries", r.reasons())
				break
			}
		}
	})
}

func TestRetryBackoffIsCappedAtTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs(), func(c *Config) {
			c.Rand = func() float64 { return 0.999999 }
			c.DriftInterval = -1
		})
		r.k.failNext(routeRef, 1000)
		r.start()
		var last time.Time
		var gaps []time.Duration
		for range 14 {
			runs := r.k.reconciles()
			for r.k.reconciles() == runs {
				time.Sleep(10 * time.Millisecond)
				synctest.Wait()
			}
			if !last.IsZero() {
				gaps = append(gaps, time.Since(last))
			}
			last = time.Now()
		}
		for _, g := range gaps[len(gaps)-3:] {
			if g > time.Minute+10*time.Millisecond || g < 59*time.Second {
				t.Errorf("late gaps %v, want about 1 min", gaps)
				break
			}
		}
		is := itemNamed(t, r.status(), routeRef)
		if is.State != dg.StateFailed.String() || is.Failures < 14 || is.LastError == "" {
			t.Errorf("route status %+v", is)
		}
		f := fileNamed(t, r.status(), "20-routes.json")
		if !f.Conditions[2].Status || f.Conditions[2].Reason != "ItemsFailed" {
			t.Errorf("Degraded %+v", f.Conditions[2])
		}
	})
}

func TestDriftCheckRepairs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs(), func(c *Config) { c.DriftInterval = time.Minute }).start()
		r.k.takeOps()
		time.Sleep(2 * time.Second) // past the check that verifies the first reconcile
		synctest.Wait()
		leftover := &items.Route{Dst: mustPrefix(t, "10.9.0.0/16"), Dev: "uplink0", Table: 254}
		changed := &items.Address{}
		r.k.tamper(func(objs map[dg.ItemRef]dg.Item) {
			delete(objs, routeRef)            // someone deleted an owned route
			objs[dg.Ref(leftover)] = leftover // an owned object nobody intends
			a := *objs[addrRef].(*items.Address)
			a.Label = "uplink0:x" // someone changed an owned address
			changed = &a
			objs[addrRef] = changed
		})
		time.Sleep(58 * time.Second) // the next check: a minute after the verify at 1 s
		synctest.Wait()
		if r.k.has(routeRef) {
			t.Fatal("repaired before the drift interval")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		ops := r.k.takeOps()
		if !r.k.has(routeRef) || r.k.has(dg.Ref(leftover)) {
			t.Errorf("drift not repaired; ops %v", ops)
		}
		if !slices.Contains(ops, "create "+routeRef.String()) || !slices.Contains(ops, "delete "+dg.Ref(leftover).String()) {
			t.Errorf("ops %v", ops)
		}
		if !slices.ContainsFunc(ops, func(op string) bool { return op == "modify "+addrRef.String() || op == "create "+addrRef.String() }) {
			t.Errorf("the changed address was not put back; ops %v", ops)
		}
		if got := r.reasons(); got[len(got)-1] != reasonDrift {
			t.Errorf("reasons %v", got)
		}
		// Nothing drifted: the next check changes nothing.
		time.Sleep(time.Minute)
		synctest.Wait()
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Errorf("a drift check without drift ran %v", ops)
		}
	})
}

// TestWatchdogStopsWhenTheLoopIsStuck: the loop pings from its own select;
// while a reconcile hangs, no ping goes out, and pings resume after it.
func TestWatchdogStopsWhenTheLoopIsStuck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs(), func(c *Config) { c.WatchdogInterval = 10 * time.Second }).start()
		time.Sleep(35 * time.Second)
		synctest.Wait()
		if got := r.notify.count("watchdog"); got != 3 {
			t.Fatalf("%d pings in 35 s at 10 s, want 3", got)
		}
		stuck := make(chan struct{})
		r.k.mu.Lock()
		r.k.stuck = stuck
		r.k.mu.Unlock()
		r.src.set("20-routes.json", twoRoutesDoc)
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := r.notify.count("watchdog"); got != 3 {
			t.Errorf("%d pings while the loop was stuck, want none after the 3 before", got-3)
		}
		r.k.mu.Lock()
		r.k.stuck = nil
		r.k.mu.Unlock()
		close(stuck)
		time.Sleep(25 * time.Second)
		synctest.Wait()
		if got := r.notify.count("watchdog"); got < 5 {
			t.Errorf("pings did not resume after the loop came back: %d", got)
		}
	})
}

func mustPrefix(t *testing.T, s string) netip.Prefix {
	t.Helper()
	p, err := netip.ParsePrefix(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestChangesAreVerifiedByAReadBackSoonAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs(), func(c *Config) { c.DriftInterval = time.Hour }).start()
		if ops := r.k.takeOps(); len(ops) == 0 {
			t.Fatal("the first reconcile changed nothing")
		}
		// The kernel undoes part of the change as a side effect.
		r.k.tamper(func(objs map[dg.ItemRef]dg.Item) { delete(objs, routeRef) })
		time.Sleep(verifyDelay + 10*time.Millisecond)
		synctest.Wait()
		if ops := r.k.takeOps(); !slices.Contains(ops, "create "+routeRef.String()) {
			t.Fatalf("not repaired by the verify check; ops %v", ops)
		}
		// The repair is verified too, then the checks go back to the interval.
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if ops := r.k.takeOps(); len(ops) != 0 {
			t.Errorf("checks without drift ran %v", ops)
		}
	})
}

// TestAChangeTheKernelDoesNotKeepBacksOff: the kernel keeps its own label
// on the address whatever the agent writes (as it clamps a sysctl, or as
// another program rewrites a chain). The read-back after each write finds
// the change undone; the first time the agent repairs it at once (it may
// have been a side effect), then it writes it again after the backoff of a
// failed item (here 50, 100, 200 ms ... up to 30 s: the jitter is pinned
// at half), not every second, and says so in status. Once the kernel
// keeps the change the backoff is forgotten: the next time it starts over.
func TestAChangeTheKernelDoesNotKeepBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, baseDocs(), func(c *Config) {
			c.Rand = func() float64 { return 0 }
			c.DriftInterval = time.Hour
		})
		kernelLabel := func(it dg.Item) dg.Item {
			a := *it.(*items.Address)
			a.Label = "uplink0:k"
			return &a
		}
		r.k.rewriteWith(addrRef, kernelLabel)
		t0 := time.Now()
		r.start()
		time.Sleep(3 * time.Minute)
		synctest.Wait()

		var got []time.Duration
		for _, at := range r.k.writesOf(addrRef) {
			got = append(got, at.Sub(t0))
		}
		// Each write is read back verifyDelay (1 s) later and found undone;
		// the next write follows after the backoff of that attempt.
		var want []time.Duration
		w := time.Duration(0)
		for i, d := range []time.Duration{0, 0, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000} {
			if i > 0 {
				w += verifyDelay + d*time.Millisecond
			}
			if w <= 3*time.Minute {
				want = append(want, w)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("writes of the address at %v, want %v", got, want)
		}
		if n := countBefore(got, 30*time.Second); n > 10 {
			t.Errorf("%d writes in the first 30 s", n)
		}

		st := r.status()
		is := itemNamed(t, st, addrRef)
		if is.State != status.StateNotConverging || is.Failures != len(want) ||
			!strings.HasPrefix(is.LastError, "the kernel did not keep the change: ") || !strings.Contains(is.LastError, "uplink0:k") {
			t.Errorf("address status %+v", is)
		}
		if st.Ready || st.NextRetry.Sub(t0) != want[len(want)-1]+verifyDelay+30*time.Second {
			t.Errorf("ready %v, next retry at %v", st.Ready, st.NextRetry.Sub(t0))
		}
		f := fileNamed(t, st, "10-uplink.json")
		if c := f.Conditions; c[1].Status || !c[2].Status || c[2].Reason != "ItemsNotConverging" ||
			!strings.Contains(c[2].Message, "did not keep") {
			t.Errorf("conditions %+v", c)
		}
		if route := itemNamed(t, st, routeRef); route.State != dg.StateCreated.String() {
			t.Errorf("the route, which the kernel keeps, is %s", route.State)
		}

		// The kernel keeps the next write: converged, the backoff forgotten.
		r.k.rewriteWith(addrRef, nil)
		time.Sleep(time.Minute)
		synctest.Wait()
		st = r.status()
		if is := itemNamed(t, st, addrRef); is.State != dg.StateCreated.String() || is.Failures != 0 || !st.Ready || !st.NextRetry.IsZero() {
			t.Fatalf("after the kernel kept the change: %+v, ready %v, next retry %v", is, st.Ready, st.NextRetry)
		}

		// Someone changes the label, and the kernel undoes the repair: the
		// backoff starts again at its first step.
		r.k.takeOps()
		r.k.rewriteWith(addrRef, kernelLabel)
		r.k.tamper(func(objs map[dg.ItemRef]dg.Item) {
			a := *objs[addrRef].(*items.Address)
			a.Label = "uplink0:x"
			objs[addrRef] = &a
		})
		time.Sleep(time.Hour + 5*time.Second) // the periodic drift check, and after
		synctest.Wait()
		writes := r.k.writesOf(addrRef)
		if len(writes) < 4 || writes[1].Sub(writes[0]) != verifyDelay || writes[2].Sub(writes[1]) != verifyDelay+50*time.Millisecond ||
			writes[3].Sub(writes[2]) != verifyDelay+100*time.Millisecond {
			t.Errorf("writes after the kernel undid a repair: %v", writes)
		}
	})
}

func countBefore(ds []time.Duration, limit time.Duration) int {
	n := 0
	for _, d := range ds {
		if d < limit {
			n++
		}
	}
	return n
}
