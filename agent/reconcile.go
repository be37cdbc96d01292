package agent

import (
	"context"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/pace"
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
	st := a.cfg.Kernel.Reconcile(ctx, s.results.records, s.current, s.intended)
	if st.NewCurrentState != nil {
		s.current = st.NewCurrentState
	}
	end := time.Now()
	s.resume = st.ReadyToResume
	s.results.record(st, reasons, start, end)
	a.scheduleRetry(log)
	if len(st.OperationLog) > 0 {
		a.verifySoon()
	}
	t := a.observeConditions()
	a.metricsAfterReconcile(reasons, start, end, st, t)
	log.WithFields(s.results.summaryFields(s.current, s.intended)).WithField("took", end.Sub(start).Round(time.Microsecond)).Info("reconciled")
	line := status.Line(a.snapshot())
	a.notify("status", func() error { return a.cfg.Notifier.Status(line) })
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
		a.workSettled()
		return
	}
	a.st.unsettled = true
	d := min(verifyDelay, a.cfg.DriftInterval)
	if at := a.st.drift.at; at.IsZero() || time.Until(at) > d {
		a.st.drift.set(d)
	}
}

// workSettled tells Config.Settled that the work of the last changes is over.
func (a *Agent) workSettled() {
	a.st.unsettled = false
	if a.cfg.Settled != nil {
		a.cfg.Settled()
	}
}

// scheduleRetry sets the retry alarm for the failed items and the held
// changes the kernel did not keep: each failed item has its own count of
// consecutive failures, each unkept item its due time, and the soonest
// wins (a Reconcile retries every failed item anyway).
func (a *Agent) scheduleRetry(log logrus.FieldLogger) {
	s := a.st
	s.retry.stop()
	if attempt, ok := s.results.nextAttempt(s.current); ok {
		d := s.results.backoff.Delay(attempt)
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

// results is the one place the agent reads per-item status from: the
// reconciler's records of the current graph (per item: failures in a row
// and since when, blocked notes and since when, operations in flight),
// which the agent owns and hands to every Reconcile, plus what is the
// agent's own: the items written since the last drift check, the changes
// the kernel did not keep (unkept, with their backoff), and counters of
// the runs.
type results struct {
	records *reconciler.Records
	backoff pace.Backoff
	err     error // the last run's Status.Err
	// written: the items operated on since the last drift check, whose
	// read-back tells whether the kernel kept the change.
	written map[dg.ItemRef]bool
	// wroteAt is when the last run that wrote something ended.
	wroteAt time.Time
	// verifier holds the changes the kernel did not keep (the rule of
	// host.Verifier), held: the daemon's timing of those it holds.
	verifier *host.Verifier
	held     map[dg.ItemRef]*held

	runs        int
	lastStart   time.Time
	lastEnd     time.Time
	lastReasons []string
	lastOps     int
}

func newResults(b pace.Backoff) results {
	return results{
		records:  reconciler.NewRecords(),
		backoff:  b,
		written:  map[dg.ItemRef]bool{},
		verifier: host.NewVerifier(),
		held:     map[dg.ItemRef]*held{},
	}
}

// record takes in the outcome of a run (the records took in theirs).
func (r *results) record(st reconciler.Status, reasons []string, start, end time.Time) {
	r.runs++
	r.lastStart, r.lastEnd, r.lastReasons, r.lastOps = start, end, reasons, len(st.OperationLog)
	r.err = st.Err
	for _, e := range st.OperationLog {
		if !e.InProgress && e.Err == nil {
			r.written[e.Ref] = true
			r.wroteAt = end
		}
	}
}

// view is the records as package status reads them.
func (r *results) view() status.Records {
	return status.Records{Reconciler: r.records, Verifier: r.verifier}
}

// failures returns how many operations on ref failed in a row, if the
// item is failed now.
func (r *results) failures(current *dg.Graph, ref dg.ItemRef) int {
	return r.view().Failures(current, ref)
}

// failed returns the items failed now.
func (r *results) failed(current *dg.Graph) []dg.ItemRef { return r.view().Failed(current) }

// block returns why ref is blocked, if it is.
func (r *results) block(current, intended *dg.Graph, ref dg.ItemRef) (reconciler.Block, bool) {
	return r.view().Block(current, intended, ref)
}

func (r *results) blocked(current, intended *dg.Graph) int {
	return r.view().Blocked(current, intended)
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
	for _, h := range r.held {
		if h.found != nil && (at.IsZero() || h.due.Before(at)) {
			at = h.due
		}
	}
	return at, !at.IsZero()
}

// notConverging counts the items under the backoff of unkept changes.
func (r *results) notConverging() int { return r.view().NotConverging() }

// nextAttempt returns the retry number due soonest: the fewest
// consecutive failures of any failed item.
func (r *results) nextAttempt(current *dg.Graph) (int, bool) {
	best := 0
	for _, ref := range r.failed(current) {
		if n := r.failures(current, ref); best == 0 || n < best {
			best = n
		}
	}
	return best, best > 0
}

func (r *results) summaryFields(current, intended *dg.Graph) logrus.Fields {
	f := logrus.Fields{"ops": r.lastOps, "failed": len(r.failed(current)), "blocked": r.blocked(current, intended)}
	if n := r.notConverging(); n > 0 {
		f["not_converging"] = n
	}
	if r.records.AnyInFlight() {
		f["async"] = true
	}
	return f
}
