package main

import (
	"fmt"
	"time"

	"github.com/netagent/netagent/agent"
	"github.com/netagent/netagent/agent/target"
)

func init() {
	register(&command{
		name:    "confirm",
		summary: "make the running trial (`netagent try`, also through the daemon) permanent",
		usage:   "[--netns NAME]",
		run:     runConfirm,
	})
}

// requestWait bounds how long confirm (and rollback of a trial) waits for
// the trial's process to act on the request.
const requestWait = 30 * time.Second

func runConfirm(g *globals, args []string) int {
	fs := newFlagSet(g, "confirm", "")
	k := kernelFlags(g, fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(g, fs, "unexpected arguments")
	}
	return requestTrial(g, k.stateDir(g), target.RequestConfirmed)
}

// rollbackTrial is `netagent rollback` when a trial is pending: it
// reverts the trial now (the running `netagent try` does, on request; a
// trial whose process died is recovered here). handled is false when no
// trial is pending: rollback then goes back to an earlier version.
func rollbackTrial(g *globals, netns, stateDir string) (code int, handled bool) {
	t, err := target.PendingTrial(stateDir)
	switch {
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: rollback: %v\n", err)
		return exitInternal, true
	case t == nil:
		return exitOK, false
	}
	if h, _ := target.HolderOf(stateDir); h == nil {
		return recoverTarget(g, netns, stateDir, defaultLockTimeout), true
	}
	return requestTrial(g, stateDir, target.RequestReverted), true
}

// requestTrial asks the process running the target's trial to confirm or
// revert it, and waits until it did.
func requestTrial(g *globals, stateDir string, r target.Request) int {
	t, err := target.PendingTrial(stateDir)
	switch {
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: %s: %v\n", r, err)
		return exitInternal
	case t == nil:
		fmt.Fprintf(g.stderr, "netagent: %s: %v\n", r, target.ErrNoTrial)
		return exitFailed
	}
	if h, err := target.HolderOf(stateDir); err != nil || h == nil || h.PID != t.PID {
		fmt.Fprintf(g.stderr, "netagent: %s: the trial of pid %d is not running (its process ended without seeing it through): "+
			"the next netagent that touches the namespace reverts it, or `netagent recover` now\n", r, t.PID)
		return exitFailed
	}
	if h, _ := target.HolderOf(stateDir); h.Daemon() { // the daemon's trial (try --via-daemon): over its socket
		// Named: a trial confirmed (or reverted) meanwhile makes the
		// request fail, never means something else.
		id := agent.TrialID(t.Started)
		if r == target.RequestConfirmed {
			return daemonTrialRequest(g, *h, agent.CmdConfirm, id)
		}
		return daemonTrialRequest(g, *h, agent.CmdRollback, id)
	}
	req := target.RequestConfirm
	if r == target.RequestReverted {
		req = target.RequestRevert
	}
	if err := req(stateDir); err != nil {
		fmt.Fprintf(g.stderr, "netagent: %s: %v\n", r, err)
		return exitInternal
	}
	for end := time.Now().Add(requestWait); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if p, _ := target.PendingTrial(stateDir); p != nil && p.PID == t.PID {
			continue
		}
		o, err := target.LastOutcome(stateDir)
		if err != nil || o == nil || o.PID != t.PID {
			fmt.Fprintf(g.stderr, "netagent: %s: the trial of pid %d ended; its outcome is unknown\n", r, t.PID)
			return exitInternal
		}
		fmt.Fprintf(g.stdout, "%s", o.Result)
		if o.Reason != "" {
			fmt.Fprintf(g.stdout, ": %s", o.Reason)
		}
		fmt.Fprintln(g.stdout)
		if (o.Result == "confirmed") != (r == target.RequestConfirmed) {
			return exitFailed
		}
		return exitOK
	}
	fmt.Fprintf(g.stderr, "netagent: %s: the trial's process (pid %d) did not answer within %v\n", r, t.PID, requestWait)
	return exitInternal
}
