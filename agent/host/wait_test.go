package host

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/linkwatch"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// fakeWait drives a waiter: converge returns the next result of a script
// (the last one for ever), link events and the end of the wait come when
// the test says.
type fakeWait struct {
	script  []*Result
	calls   int
	events  chan linkwatch.Event
	timeout chan time.Time
	waited  time.Duration
	// subscribed counts the subscriptions; ended is closed when the
	// subscription's context ends.
	subscribed int
	ended      chan struct{}
}

func newFakeWait(script ...*Result) *fakeWait {
	return &fakeWait{script: script, events: make(chan linkwatch.Event), timeout: make(chan time.Time), ended: make(chan struct{})}
}

func (f *fakeWait) waiter() *waiter {
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	return &waiter{
		converge: func(context.Context) (*Result, error) {
			res := f.script[min(f.calls, len(f.script)-1)]
			f.calls++
			return &Result{Ops: res.Ops, Problems: res.Problems}, nil
		},
		subscribe: func(ctx context.Context) <-chan linkwatch.Event {
			f.subscribed++
			context.AfterFunc(ctx, func() { close(f.ended) })
			return f.events
		},
		after: func(d time.Duration) <-chan time.Time { f.waited = d; return f.timeout },
		wait:  time.Hour,
		log:   log,
	}
}

var (
	routeRef  = dg.ItemRef{Type: items.TypeRoute, Name: "main 0.0.0.0/0"}
	blocked   = &Result{Ops: oneOp("interface/wan0"), Problems: []Problem{{Ref: routeRef, Blocked: true, WaitsOnLink: true, Reason: "waiting for link/wan0 (carrier up)"}}}
	converged = &Result{Ops: oneOp("route/main 0.0.0.0/0")}
	failed    = &Result{Problems: []Problem{{Ref: routeRef, Reason: "create failed: boom"}}}
)

func oneOp(name string) reconciler.OperationLog {
	return reconciler.OperationLog{{Ref: dg.ItemRef{Type: "x", Name: name}, Op: dg.OpCreate}}
}

// run starts the waiter and returns where its outcome arrives.
func (f *fakeWait) run() <-chan *Result {
	out := make(chan *Result, 1)
	go func() {
		res, _ := f.waiter().run(context.Background())
		out <- res
	}()
	return out
}

// A blocked convergence subscribes to the link events and converges again
// once subscribed (whatever changed before is in its read-back), then at
// each link event; the wait ends as soon as nothing is blocked, long
// before its end, and ends the subscription.
func TestWaitConvergesAtLinkEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeWait(blocked, blocked, converged)
		out := f.run()
		synctest.Wait()
		if f.calls != 1 || f.subscribed != 1 {
			t.Fatalf("%d convergences and %d subscriptions before the subscription was made, want 1 and 1", f.calls, f.subscribed)
		}
		f.events <- linkwatch.Event{Resync: true} // subscribed
		synctest.Wait()
		if f.calls != 2 {
			t.Fatalf("%d convergences after subscribing, want 2", f.calls)
		}
		f.events <- linkwatch.Event{Names: []string{"wan0"}} // carrier up
		res := <-out                                         // never the timeout: synctest fails a deadlock
		if !res.Converged() || f.calls != 3 || len(res.Ops) != 3 || f.subscribed != 1 {
			t.Errorf("after the event: converged %v, %d convergences, ops %v, %d subscriptions", res.Converged(), f.calls, res.Ops, f.subscribed)
		}
		if f.waited != time.Hour {
			t.Errorf("the wait is %v, want the option's", f.waited)
		}
		synctest.Wait() // the subscription's end runs in its own goroutine
		select {
		case <-f.ended:
		default:
			t.Error("the subscription outlives the wait")
		}
	})
}

// The convergence right after the subscription sees what the kernel did
// before it (the carrier came up during the first convergence): no event
// is needed.
func TestWaitConvergesOnceSubscribed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeWait(blocked, converged)
		out := f.run()
		f.events <- linkwatch.Event{Resync: true}
		if res := <-out; !res.Converged() || f.calls != 2 || len(res.Ops) != 2 {
			t.Errorf("converged %v, %d convergences, ops %v", res.Converged(), f.calls, res.Ops)
		}
	})
}

// Items still blocked when the wait ends are reported blocked.
func TestWaitReportsBlockedAfterTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeWait(blocked)
		out := f.run()
		f.events <- linkwatch.Event{Resync: true}
		f.events <- linkwatch.Event{Names: []string{"wan0-peer"}} // not the carrier
		synctest.Wait()
		f.timeout <- time.Time{}
		res := <-out
		if res.Converged() || !res.Problems[0].Blocked || f.calls != 3 {
			t.Errorf("converged %v, problems %v, %d convergences", res.Converged(), res.Problems, f.calls)
		}
	})
}

// Failures that no dependency blocks are not waited for, nor a convergence
// without problems: nothing subscribes.
func TestWaitReturnsAtOnceWhenNothingIsBlocked(t *testing.T) {
	for _, script := range []*Result{failed, converged} {
		synctest.Test(t, func(t *testing.T) {
			f := newFakeWait(script)
			if res := <-f.run(); f.calls != 1 || f.subscribed != 0 || len(res.Problems) != len(script.Problems) {
				t.Errorf("%d convergences, %d subscriptions, problems %v", f.calls, f.subscribed, res.Problems)
			}
		})
	}
}

// Without a subscription by the end of the wait, it converges once.
func TestWaitWithoutSubscription(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeWait(blocked)
		out := f.run()
		synctest.Wait()
		f.timeout <- time.Time{}
		if res := <-out; f.calls != 1 || res.Converged() {
			t.Errorf("%d convergences, converged %v", f.calls, res.Converged())
		}
	})
}

// An item blocked only behind a failed one waits for nothing a link event
// brings: the wait ends at once.
func TestWaitReturnsAtOnceWhenBlockedOnlyBehindAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		behind := &Result{Problems: []Problem{
			{Ref: dg.ItemRef{Type: items.TypeAddress, Name: "wan0 192.0.2.1/24"}, Reason: "create failed: exists and is not owned by netagent"},
			{Ref: routeRef, Blocked: true, Reason: "waiting for address/wan0 192.0.2.1/24 (failed: ...)"},
		}}
		f := newFakeWait(behind)
		if res := <-f.run(); f.calls != 1 || f.subscribed != 0 || len(res.Problems) != 2 {
			t.Errorf("%d convergences, %d subscriptions, problems %v", f.calls, f.subscribed, res.Problems)
		}
	})
}
