package target

import (
	"context"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/linkwatch"
	"github.com/netagent/netagent/reconciler"
)

// waiter converges, and converges again at each link event while items
// are blocked, for a bounded time: Apply with a wait.
type waiter struct {
	// converge is one convergence (Runtime.converge on the intended graph).
	converge func(ctx context.Context) (*Result, error)
	// events are the namespace's link events; the first one says that the
	// subscription is made.
	events <-chan linkwatch.Event
	// after is time.After (replaced in tests).
	after func(time.Duration) <-chan time.Time
	wait  time.Duration
	log   logrus.FieldLogger
}

// run waits for the link subscription, so that no event the first
// convergence causes is missed, converges, and while items are blocked
// converges again at each link event until the wait ends. The wait starts
// with run and bounds it all, the subscription included: without a
// subscription by then, it converges once and returns.
func (w *waiter) run(ctx context.Context) (*Result, error) {
	timeout := w.after(w.wait)
	select {
	case <-w.events:
	case <-timeout:
		w.log.WithField("wait", w.wait).Warn("no link subscription in time; not waiting for link events")
		return w.converge(ctx)
	case <-ctx.Done():
		return w.converge(ctx)
	}
	var ops reconciler.OperationLog
	for {
		res, err := w.converge(ctx)
		if err != nil {
			return nil, err
		}
		ops = append(ops, res.Ops...)
		res.Ops = ops
		if !anyBlocked(res) {
			return res, nil
		}
		w.log.WithField("blocked", countBlocked(res)).Debug("items blocked; waiting for link events")
		select {
		case ev := <-w.events:
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
// Problem.WaitsOnLink): only then can a link event change the outcome.
func anyBlocked(res *Result) bool { return countBlocked(res) > 0 }

func countBlocked(res *Result) int {
	n := 0
	for _, p := range res.Problems {
		if p.WaitsOnLink {
			n++
		}
	}
	return n
}
