package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// reconcile runs one Reconcile for the reasons gathered this turn, logs
// it (a line before and a summary after; the Kernel logs one line per
// kernel operation in between) and schedules the retry of what failed.
func (a *Agent) reconcile(ctx context.Context) reconciler.Status {
	s := a.st
	reasons := s.reasons
	s.reasons = nil
	log := a.log.WithField("reason", strings.Join(reasons, ","))
	log.Info("reconciling")
	start := time.Now()
	st := a.cfg.Kernel.Reconcile(ctx, s.current, s.intended)
	if st.NewCurrentState != nil {
		s.current = st.NewCurrentState
	}
	end := time.Now()
	s.resume = st.ReadyToResume
	s.results.record(st, s.current, reasons, start, end)
	a.scheduleRetry(log)
	if len(st.OperationLog) > 0 {
		a.verifySoon()
	}
	a.observeConditions()
	log.WithFields(s.results.summaryFields()).WithField("took", end.Sub(start).Round(time.Microsecond)).Info("reconciled")
	a.notify("status", func() error { return a.cfg.Notifier.Status(s.results.summary()) })
	return st
}

// verifyDelay is how soon after a reconcile that changed the kernel the
// agent reads it back (a drift check), because the kernel may undo part of
// a change as a side effect: a bridge whose MAC changes when a port joins
// flushes its permanent neighbour entries.
const verifyDelay = time.Second

// verifySoon brings the next drift check forward to verifyDelay from now
// (or the drift interval, if shorter). With drift checks off it does nothing.
func (a *Agent) verifySoon() {
	if a.cfg.DriftInterval <= 0 {
		return
	}
	d := min(verifyDelay, a.cfg.DriftInterval)
	if at := a.st.drift.at; at.IsZero() || time.Until(at) > d {
		a.st.drift.set(d)
	}
}

// scheduleRetry sets the retry alarm for the failed items: each has its
// own count of consecutive failures, and the soonest due retry wins (a
// Reconcile retries every failed item anyway).
func (a *Agent) scheduleRetry(log logrus.FieldLogger) {
	s := a.st
	attempt, ok := s.results.nextAttempt()
	if !ok {
		s.retry.stop()
		return
	}
	d := s.results.backoff.delay(attempt)
	s.retry.set(d)
	log.WithFields(logrus.Fields{"attempt": attempt, "in": d.Round(time.Millisecond)}).Info("retrying failed items")
}

// results remembers what the reconciles did: per item, the consecutive
// failures and when it became blocked; the last run's blocked reasons and
// errors; counters for the status.
type results struct {
	backoff      backoff
	failures     map[dg.ItemRef]int
	blocked      map[dg.ItemRef]string
	blockedSince map[dg.ItemRef]time.Time
	err          error // the last run's Status.Err
	async        bool

	runs        int
	lastStart   time.Time
	lastEnd     time.Time
	lastReasons []string
	lastOps     int
}

func newResults(b backoff) results {
	return results{
		backoff:      b,
		failures:     map[dg.ItemRef]int{},
		blocked:      map[dg.ItemRef]string{},
		blockedSince: map[dg.ItemRef]time.Time{},
	}
}

// record takes in the outcome of a run.
func (r *results) record(st reconciler.Status, current *dg.Graph, reasons []string, start, end time.Time) {
	r.runs++
	r.lastStart, r.lastEnd, r.lastReasons, r.lastOps = start, end, reasons, len(st.OperationLog)
	r.err, r.async = st.Err, st.AsyncOpsInProgress
	for _, e := range st.OperationLog {
		switch {
		case e.InProgress:
		case e.Err != nil:
			r.failures[e.Ref]++
		default:
			delete(r.failures, e.Ref)
		}
	}
	for ref := range r.failures {
		if s, ok := current.State(ref); !ok || s.State != dg.StateFailed {
			delete(r.failures, ref)
		}
	}
	r.recordBlocked(st.Blocked, end)
}

func (r *results) recordBlocked(blocked map[dg.ItemRef]string, now time.Time) {
	for ref := range r.blockedSince {
		if _, still := blocked[ref]; !still {
			delete(r.blockedSince, ref)
		}
	}
	for ref := range blocked {
		if _, ok := r.blockedSince[ref]; !ok {
			r.blockedSince[ref] = now
		}
	}
	r.blocked = blocked
	if r.blocked == nil {
		r.blocked = map[dg.ItemRef]string{}
	}
}

// nextAttempt returns the retry number due soonest: the fewest
// consecutive failures of any failed item.
func (r *results) nextAttempt() (int, bool) {
	best := 0
	for _, n := range r.failures {
		if best == 0 || n < best {
			best = n
		}
	}
	return best, best > 0
}

func (r *results) summaryFields() logrus.Fields {
	f := logrus.Fields{"ops": r.lastOps, "failed": len(r.failures), "blocked": len(r.blocked)}
	if r.async {
		f["async"] = true
	}
	return f
}

// summary is the one-line status for the service manager.
func (r *results) summary() string {
	if len(r.failures) == 0 && len(r.blocked) == 0 {
		return fmt.Sprintf("converged (%d reconciles)", r.runs)
	}
	return fmt.Sprintf("%d failed, %d blocked (%d reconciles)", len(r.failures), len(r.blocked), r.runs)
}
