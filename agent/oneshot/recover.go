package oneshot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/internal/plural"
)

// Recovered is what Prepare's first step found of a trial left pending.
type Recovered struct {
	// Recovery is what a writer reverted (or completed) of the trial a
	// process left pending; nil when none was.
	Recovery *host.Recovery
	// Trial (a reader) is a trial in progress, run by Holder: what the
	// reader reads is the trial's state.
	Trial  *host.Trial
	Holder *host.Holder
}

// RecoverError is a revert of a pending trial that failed; Record, when
// set, is why its outcome could not be recorded either.
type RecoverError struct {
	Err, Record error
}

func (e *RecoverError) Error() string { return "reverting the pending trial: " + e.Err.Error() }
func (e *RecoverError) Unwrap() error { return e.Err }

// RecoverFirst reverts the namespace's pending trial before a writer acts
// on it (the writer holds the lock already). A reader (plan, check) writes
// nothing: it learns of a trial in progress (it shows the trial's state),
// and fails while one is pending that no process runs, saying to run
// `netagent recover` (host.TrialForReader).
func RecoverFirst(ctx context.Context, rt *host.Runtime, write bool) (Recovered, error) {
	if write {
		rec, err := RecoverPending(ctx, rt, rt.Recover)
		return Recovered{Recovery: rec}, err
	}
	t, h, err := host.TrialForReader(rt.StateDir())
	return Recovered{Trial: t, Holder: h}, err
}

// RecoverPending runs a recovery (rt.Recover, or
// rt.RecoverAcceptIncomplete) and returns what it did (nil: no trial was
// pending). A revert that could not finish is recorded as the trial's
// last outcome (RevertIncomplete, with why: the namespace records the
// journal's own accounting itself), so that status says so while the
// trial stays pending for the next attempt; the error is a
// *RecoverError then.
func RecoverPending(ctx context.Context, rt *host.Runtime, recover func(context.Context) (*host.Recovery, error)) (*host.Recovery, error) {
	pending, _ := host.PendingTrial(rt.StateDir())
	rec, err := recover(ctx)
	if err == nil {
		return rec, nil
	}
	re := &RecoverError{Err: err}
	if pending != nil && !errors.Is(err, host.ErrRevertIncomplete) {
		o := host.Outcome{PID: pending.PID, Result: host.OutcomeRevertIncomplete, At: time.Now(),
			Reason: fmt.Sprintf("the revert of the trial started %s could not finish (it stays pending): %v", pending.Started.Format(time.RFC3339), err)}
		re.Record = host.RecordOutcome(rt.StateDir(), o)
	}
	return rec, re
}

// RecoveryNote says what a recovery did, in a line for the operator.
func RecoveryNote(rec *host.Recovery) string {
	started := rec.Trial.Started.Format(time.RFC3339)
	switch {
	case rec.Confirmed:
		return fmt.Sprintf("confirmed the pending trial of pid %d (started %s): its confirm had written %s when the process ended",
			rec.Trial.PID, started, rec.Trial.Confirming.File)
	case rec.Unaccounted != "":
		name := fmt.Sprintf("of pid %d (started %s)", rec.Trial.PID, started)
		if rec.Trial.PID == 0 {
			name = "(its record damaged)"
		}
		return fmt.Sprintf("reverted the pending trial %s only in part (--accept-incomplete): %s; NOT known or reverted: %s",
			name, plural.N(len(rec.Result.Ops), "operation"), rec.Unaccounted)
	}
	return fmt.Sprintf("reverted the pending trial of pid %d (started %s): %s; %s",
		rec.Trial.PID, started, RecoveredHow(rec), plural.N(len(rec.Result.Ops), "operation"))
}

// RecoveredHow says why a recovered trial had been left pending
// (trial.RecoveredHow, which the daemon's outcome says too).
func RecoveredHow(rec *host.Recovery) string { return trial.RecoveredHow(rec) }

// TrialNote is a reader's line about a trial in progress (Recovered.Trial).
func (r Recovered) TrialNote() string {
	if r.Trial == nil {
		return ""
	}
	return fmt.Sprintf("a trial is in progress (%s, started %s, reverts at %s unless confirmed): this shows the trial's state",
		r.Holder, r.Trial.Started.Format(time.RFC3339), r.Trial.Deadline.Format(time.RFC3339))
}

// RecoverAtStart is what the daemon does before its loop starts: it
// reverts the trial its last stop left pending (RecoverPending with
// rt.Recover; rec nil: none was), and returns how the last trial ended
// for its status (that revert's outcome, or the one stateDir records: a
// trial recovered before, by recover --all at boot).
func RecoverAtStart(ctx context.Context, rt *host.Runtime, stateDir string) (rec *host.Recovery, last *status.TrialOutcome, err error) {
	rec, err = RecoverPending(ctx, rt, rt.Recover)
	if err != nil {
		return rec, nil, err
	}
	if rec != nil {
		return rec, trial.Recovered(rec, stateDir, time.Now()), nil
	}
	return nil, trial.LastOutcome(stateDir), nil
}
