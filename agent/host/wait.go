package host

import (
	"context"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/linkwatch"
)

// waiter converges, and converges again at each link event while items
// are blocked, for a bounded time: Apply with a wait.
type waiter struct {
	// converge is one convergence (Runtime.converge on the intended graph).
	converge func(ctx context.Context) (*Result, error)
	// subscribe starts the namespace's link events (a linkwatch.Watcher's
	// Watch until ctx ends); the first event says that the subscription is
	// made.
	subscribe func(ctx context.Context) <-chan linkwatch.Event
	// after is time.After (replaced in tests).
	after func(time.Duration) <-chan time.Time
	wait  time.Duration
	// nics: wait also for NICs that do not exist on this host
	// (ApplyOptions.WaitForNICs).
	nics bool
	log  logrus.FieldLogger
}

// run converges and, only when items are blocked, subscribes to the link
// events, converges again once the subscription is made (a fresh
// read-back, so that nothing that changed before it is missed) and again
// at each link event while items are blocked, until the wait ends. An
// apply that blocks nothing never subscribes: the kernel would wake the
// subscriber for every notification its own writes cause (at 500 bridge
// and VXLAN pairs, thousands, 40-50 ms of an apply). The wait starts with
// run and bounds it all, the subscription included: without a
// subscription by then, it returns the first convergence.
func (w *waiter) run(ctx context.Context) (*Result, error) {
	timeout := w.after(w.wait)
	res, err := w.converge(ctx)
	if err != nil || !w.anyBlocked(res) {
		return res, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the subscription
	events := w.subscribe(ctx)
	select {
	case <-events:
	case <-timeout:
		w.log.WithField("wait", w.wait).Warn("no link subscription in time; not waiting for link events")
		return res, nil
	case <-ctx.Done():
		return res, nil
	}
	ops := res.Ops
	for {
		res, err := w.converge(ctx)
		if err != nil {
			return nil, err
		}
		ops = append(ops, res.Ops...)
		res.Ops = ops
		if !w.anyBlocked(res) {
			return res, nil
		}
		w.log.WithField("blocked", w.countBlocked(res)).Debug("items blocked; waiting for link events")
		select {
		case ev := <-events:
			w.log.WithFields(logrus.Fields{"links": ev.Names, "resync": ev.Resync}).Debug("link event; converging again")
		case <-timeout:
			w.log.WithField("wait", w.wait).Info("items still blocked at the end of the wait")
			return res, nil
		case <-ctx.Done():
			return res, nil
		}
	}
}

// anyBlocked reports whether an item of res waits for a link (see
// Problem.WaitsOnLink): only then can a link event change the outcome. An
// item waiting only for a NIC that does not exist on this host
// (Problem.MissingNIC) counts only with w.nics: nothing but a hotplug
// brings it; with w.nics, so does a physical interface whose match finds
// no NIC.
func (w *waiter) anyBlocked(res *Result) bool { return w.countBlocked(res) > 0 }

func (w *waiter) countBlocked(res *Result) int {
	n := 0
	for _, p := range res.Problems {
		if p.MissingNIC != "" && w.nics || p.MissingNIC == "" && p.WaitsOnLink {
			n++
		}
	}
	return n
}
