// Package trial is the trial mechanism that the daemon's trial (agent,
// on its loop: `netagent try --via-daemon`) and the one-shot `netagent
// try` (agent/oneshot) share, so that the two decide alike:
//
//   - when a trial reverts, and why (Judge): an item it made fail, unless
//     it keeps what converged (keep partial); an item it blocked once the
//     wait for the link events that may unblock it is over, unless it
//     keeps what converged; a change the kernel did not keep (the
//     read-back after the apply differs from the intent), whatever keep
//     partial says; items failed or blocked before the trial are not its
//     doing and count for none of these;
//   - the probes and their window (Window, RunProbes, Probes): each probe
//     is retried until it passes, for the probe timeout at most and never
//     past the trial's deadline;
//   - the pre-check (PreCheck, PreChecks): every probe run once before
//     the change; one failing already is reported and does not judge the
//     trial (Refusal: unless it must pass before); and the watch of a
//     standing trial (Watch, Watches): its probes every ProbeInterval, one
//     failing FailuresToRevert times in a row reverts it. The one-shot
//     try, the daemon's trials and a fleet member's (agent/member) call
//     these same functions; a failure that reverts is a ProbeFailure
//     (which probe, when), recorded in the trial's outcome;
//   - the bounds of probe specs from the socket or the store (CheckSpecs);
//   - the reasons a revert gives (Revert.Reason) and the kind of fault
//     each is (Fault: the one-shot's exit code; FaultOf reads it back from
//     a daemon's reason);
//   - the outcome recorded, as status shows it (LastOutcome, Recovered,
//     Pending);
//   - the defaults of the timeout, the probe timeout and the wait.
//
// The journal, the trial record and the revert itself are agent/host's
// (TrialRun): Starter and Handle are what the daemon's loop begins and
// ends trials through, and OnRuntime backs them with a host.Runtime.
//
// The package holds no state and starts no goroutine: the drivers own the
// trial in progress (the daemon's loop, or the one-shot command) and call
// it. It never imports the agent root package.
package trial
