package oneshot

import (
	"context"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/status"
)

// `netagent confirm` and `netagent rollback` of a trial: they ask the
// process that runs the namespace's pending trial to confirm or revert it
// and wait until it did. A one-shot `netagent try` is asked through the
// trial directory (host.RequestConfirm, host.RequestRevert); the daemon's
// trial (`try --via-daemon`) over its socket API, naming the trial
// (RunningTrial.DaemonTrial), so that a trial that ended meanwhile makes
// the request fail instead of meaning something else.

// RequestWait bounds how long confirm (and rollback of a trial) waits for
// the trial's process to act on the request.
const RequestWait = 30 * time.Second

// RunningTrial is a pending trial and the process that runs it.
type RunningTrial struct {
	Trial  host.Trial
	Holder host.Holder
}

// DaemonTrial is the id of the trial in the daemon's socket API, when the
// daemon runs it ("": a one-shot try runs it).
func (r *RunningTrial) DaemonTrial() string {
	if !r.Holder.Daemon() {
		return ""
	}
	return status.TrialID(r.Trial.Started)
}

// FindRunningTrial returns the pending trial of stateDir and the process
// that runs it: host.ErrNoTrial when none is pending, an
// *host.AbandonedTrialError when no process runs it. The holder is read
// once: a process that ends between two reads would leave the second nil.
func FindRunningTrial(stateDir string) (*RunningTrial, error) {
	t, err := host.PendingTrial(stateDir)
	switch {
	case err != nil:
		return nil, err
	case t == nil:
		return nil, host.ErrNoTrial
	}
	h, err := host.HolderOf(stateDir)
	switch {
	case err != nil:
		return nil, err
	case h == nil || h.PID != t.PID:
		return nil, &host.AbandonedTrialError{Trial: *t}
	}
	return &RunningTrial{Trial: *t, Holder: *h}, nil
}

// Ask asks the one-shot process that runs the trial to confirm it (r
// host.RequestConfirmed) or revert it, and waits, up to RequestWait, until
// it did: how the trial ended, or host.OutcomeRevertIncomplete (its
// process could not revert it and ended; the trial stays pending). An
// error that is host.ErrTrialPending: the process ended without acting.
func (r *RunningTrial) Ask(stateDir string, req host.Request) (*host.Outcome, error) {
	send := host.RequestConfirm
	if req == host.RequestReverted {
		send = host.RequestRevert
	}
	since := time.Now()
	if err := send(stateDir); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), RequestWait)
	defer cancel()
	return host.AwaitAnswer(ctx, stateDir, r.Trial, since)
}

// Answered reports whether the outcome o is the one req asked for.
func Answered(o *host.Outcome, req host.Request) bool {
	return (o.Result == "confirmed") == (req == host.RequestConfirmed)
}
