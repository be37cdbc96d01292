// Package oneshot holds the one-shot commands of netagent as library
// calls: each takes its Options (and the intent files), acts on one
// namespace once and returns a result value. It prints nothing;
// cmd/netagent parses the flags, makes one call and prints the result.
//
//	Apply     converge once (Applied: operations, disruption, leases,
//	          orphans; Outcome Converged, NotConverged or Refused)
//	Plan      the operations an apply would run now (Planned)
//	Check     the kernel compared with the intent (Checked)
//	Show      what the kernel holds (Shown: text sections, JSON documents)
//	Diff      two versions of the intent, and going from one to the other
//	Graph     DOT of the intent, the kernel, or the two
//	Validate  the intent files as a whole
//	Try       apply on trial: probes, confirm or revert (Trial.Run, with
//	          the mechanism the daemon's trials share: agent/trial)
//	RollbackTo  a numbered version made the intended state again
//	Recover   damaged state records reported or set aside, a pending
//	          trial reverted (Recover, RecoverTrial, StateTargets)
//	FindRunningTrial  the one-shot try a confirm or rollback talks to
//	History   the numbered versions
//
// The steps the commands share are here too, each once, for the one-shot
// commands of other files (try, rollback) to call:
//
//	Gate      the writer's lock and the daemon gate: go ahead, or a daemon
//	          serves the namespace (a Decision; Start makes the latter a
//	          *DaemonError)
//	Load      read, parse and check the intent files (no render)
//	Prepare   open the namespace (host.Open), revert a pending trial first
//	          (a writer: RecoverFirst), and render the intent ONCE with the
//	          host's facts (Facts) and the DHCP leases the state directory
//	          keeps (KeptLeases)
//	Guard     the protection of links (host.Runtime.Guard): refusals,
//	          orphans, and what to apply
//	ApplyGuarded, ApplyLeases   the apply and its lease rounds
//	RecordVersion               the intent as a numbered version
//
// With --via-daemon the commands go through the daemon that serves the
// namespace instead (viadaemon.go): CallDaemon sends the intent files as
// the API document; ApplyViaDaemon (waiting for the items, WaitAPIItems),
// PlanViaDaemon, CheckViaDaemon, RollbackViaDaemon, TryViaDaemon,
// PollDaemonTrial and DaemonTrialRequest return its answers and the
// Outcome; DaemonStatus its status. The daemon's own start recovers a
// pending trial with RecoverAtStart.
//
// The daemon uses the same render facts (DaemonFacts) and the same
// judgement of protected links (NewDaemonGuard, over agent/host's
// Guarded), and the same drift-ignore rule (host.IgnoredDrift).
//
// Rules: oneshot never imports the agent root package (the daemon's loop)
// and never writes to stdout or stderr: it logs through Options.Log, and
// tells the caller what it must know at once through the hooks of Options
// and ApplySpec (a recovery, the judgement). An error names the object it
// is about and wraps the cause; the kinds of error cmd maps to its exit
// codes are in errors.go (InvalidError, UsageError, DaemonError,
// RecoverError, StepError, ErrNoIntent; versions.ErrConflict).
package oneshot
