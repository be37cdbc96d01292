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
	a.pruneUnkept(start)
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

// scheduleRetry sets the retry alarm for the failed items and the held
// changes the kernel did not keep: each failed item has its own count of
// consecutive failures, each unkept item its due time, and the soonest
// wins (a Reconcile retries every failed item anyway).
func (a *Agent) scheduleRetry(log logrus.FieldLogger) {
	s := a.st
	s.retry.stop()
	if attempt, ok := s.results.nextAttempt(); ok {
		d := s.results.backoff.delay(attempt)
		s.retry.set(d)
		log.WithFields(logrus.Fields{"attempt": attempt, "in": d.Round(time.Millisecond)}).Info("retrying failed items")
	}
	a.scheduleUnkept()
}

// scheduleUnkept brings the retry alarm forward to the soonest held
// change, if that is sooner.
func (a *Agent) scheduleUnkept() {
	s := a.st
	if due, ok := s.results.nextUnkept(); ok && (s.retry.at.IsZero() || due.Before(s.retry.at)) {
		s.retry.set(max(time.Until(due), 0))
	}
}

// retryDue handles the retry alarm: the held changes that are due are
// released, and a reconcile retries them and every failed item.
func (a *Agent) retryDue() {
	a.releaseUnkept(time.Now())
	a.st.want(reasonRetry)
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
	// written: the items operated on since the last drift check, whose
	// read-back tells whether the kernel kept the change.
	written map[dg.ItemRef]bool
	unkept  map[dg.ItemRef]*unkept

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
		written:      map[dg.ItemRef]bool{},
		unkept:       map[dg.ItemRef]*unkept{},
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
			r.written[e.Ref] = true
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

// takeWritten returns the items written since the last call.
func (r *results) takeWritten() map[dg.ItemRef]bool {
	w := r.written
	r.written = map[dg.ItemRef]bool{}
	return w
}

// nextUnkept returns when the soonest held change is due.
func (r *results) nextUnkept() (time.Time, bool) {
	var at time.Time
	for _, u := range r.unkept {
		if u.found != nil && (at.IsZero() || u.due.Before(at)) {
			at = u.due
		}
	}
	return at, !at.IsZero()
}

// notConverging counts the items under the backoff of unkept changes.
func (r *results) notConverging() int {
	n := 0
	for _, u := range r.unkept {
		if u.held() {
			n++
		}
	}
	return n
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
	if n := r.notConverging(); n > 0 {
		f["not_converging"] = n
	}
	if r.async {
		f["async"] = true
	}
	return f
}

// summary is the one-line status for the service manager.
func (r *results) summary() string {
	n := r.notConverging()
	if len(r.failures) == 0 && len(r.blocked) == 0 && n == 0 {
		return fmt.Sprintf("converged (%d reconciles)", r.runs)
	}
	if n > 0 {
		return fmt.Sprintf("%d failed, %d blocked, %d not converging (%d reconciles)", len(r.failures), len(r.blocked), n, r.runs)
	}
	return fmt.Sprintf("%d failed, %d blocked (%d reconciles)", len(r.failures), len(r.blocked), r.runs)
}
