package trial

import (
	"fmt"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/internal/plural"
)

// LastOutcome is the last trial's outcome recorded in the state directory
// (host.LastOutcome), as status shows it, or nil. A record that cannot be
// read is an outcome "unknown" saying why, never no outcome at all.
func LastOutcome(stateDir string) *status.TrialOutcome {
	o, err := host.LastOutcome(stateDir)
	switch {
	case err != nil:
		return &status.TrialOutcome{Result: status.TrialUnknown, Reason: fmt.Sprintf("the record of the last trial cannot be read: %v", err)}
	case o == nil:
		return nil
	}
	return &status.TrialOutcome{Result: o.Result, Reason: o.Reason, At: o.At}
}

// RecoveredHow says why a recovered trial had been left pending.
func RecoveredHow(rec *host.Recovery) string {
	if rec.Lost {
		return "the kernel lost its changes in a reboot (or the namespace was made anew)"
	}
	return "the process that ran it died (or could not revert it)"
}

// Recovered is the daemon's last trial after it reverted (or completed
// the confirm of), at its start, the trial it (or another netagent) had
// left pending: from the recovery itself, with the reason the target
// recorded (why the revert went as it did) when that record can be read.
func Recovered(rec *host.Recovery, stateDir string, at time.Time) *status.TrialOutcome {
	if rec.Confirmed {
		return &status.TrialOutcome{ID: status.TrialID(rec.Trial.Started), Result: "confirmed", At: at, File: rec.Trial.Confirming.File,
			Reason: fmt.Sprintf("completed when the daemon started again: the daemon that confirmed it (pid %d) was stopped after writing the file, before recording the confirm", rec.Trial.PID)}
	}
	why := RecoveredHow(rec) + fmt.Sprintf(" (pid %d)", rec.Trial.PID)
	if o, err := host.LastOutcome(stateDir); err == nil && o != nil && o.PID == rec.Trial.PID && o.Reason != "" {
		why = o.Reason
	}
	return &status.TrialOutcome{ID: status.TrialID(rec.Trial.Started), Result: "reverted", At: at,
		Reason: fmt.Sprintf("reverted when the daemon started again: %s; %s", why, plural.N(len(rec.Result.Ops), "operation"))}
}

// OneShot is status without a daemon: the trial of a one-shot
// `netagent try`, from the state directory.
type OneShot struct {
	Daemon    string               `json:"daemon"`
	Trial     *status.TrialStatus  `json:"trial,omitempty"`
	LastTrial *status.TrialOutcome `json:"lastTrial,omitempty"`
}

// NotRunning is OneShot.Daemon: no daemon answers.
const NotRunning = "not running"

// OneShotStatus reads the pending trial and the last outcome of the state
// directory, for status when no daemon answers; nil when there is neither.
func OneShotStatus(stateDir string) *OneShot {
	st := &OneShot{Daemon: NotRunning, LastTrial: LastOutcome(stateDir)}
	if t, err := host.PendingTrial(stateDir); err == nil && t != nil {
		st.Trial = &status.TrialStatus{Since: t.Started, Deadline: t.Deadline, Probes: t.Probes, PID: t.PID}
	}
	if st.Trial == nil && st.LastTrial == nil {
		return nil
	}
	return st
}
