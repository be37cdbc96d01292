package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/internal/termsafe"
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
	return requestTrial(g, k.stateDir(g), host.RequestConfirmed)
}

// rollbackTrial is `netagent rollback` when a trial is pending: it
// reverts the trial now (the running `netagent try` does, on request; a
// trial whose process died is recovered here). handled is false when no
// trial is pending: rollback then goes back to an earlier version.
func rollbackTrial(g *globals, netns, stateDir string) (code int, handled bool) {
	t, err := host.PendingTrial(stateDir)
	switch {
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: rollback: %v\n", err)
		return exitInternal, true
	case t == nil:
		return exitOK, false
	}
	if h, _ := host.HolderOf(stateDir); h == nil {
		return recoverTarget(g, netns, stateDir, oneshot.DefaultLockTimeout), true
	}
	return requestTrial(g, stateDir, host.RequestReverted), true
}

// requestTrial asks the process running the target's trial to confirm or
// revert it, and waits until it did.
func requestTrial(g *globals, stateDir string, r host.Request) int {
	t, err := host.PendingTrial(stateDir)
	switch {
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: %s: %v\n", r, err)
		return exitInternal
	case t == nil:
		fmt.Fprintf(g.stderr, "netagent: %s: %v\n", r, host.ErrNoTrial)
		return exitFailed
	}
	// The holder is read once: a process that ends between two reads
	// would leave the second nil.
	h, err := host.HolderOf(stateDir)
	switch {
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: %s: %v\n", r, err)
		return exitInternal
	case h == nil || h.PID != t.PID:
		fmt.Fprintf(g.stderr, "netagent: %s: %v\n", r, &host.AbandonedTrialError{Trial: *t})
		return exitFailed
	}
	if h.Daemon() { // the daemon's trial (try --via-daemon): over its socket
		// Named: a trial confirmed (or reverted) meanwhile makes the
		// request fail, never means something else.
		id := status.TrialID(t.Started)
		if r == host.RequestConfirmed {
			return daemonTrialRequest(g, *h, api.CmdConfirm, id)
		}
		return daemonTrialRequest(g, *h, api.CmdRollback, id)
	}
	req := host.RequestConfirm
	if r == host.RequestReverted {
		req = host.RequestRevert
	}
	since := time.Now()
	if err := req(stateDir); err != nil {
		fmt.Fprintf(g.stderr, "netagent: %s: %v\n", r, err)
		return exitInternal
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestWait)
	defer cancel()
	o, err := host.AwaitAnswer(ctx, stateDir, *t, since)
	switch {
	case errors.Is(err, host.ErrTrialPending):
		fmt.Fprintf(g.stderr, "netagent: %s: %v\n", r, err)
		return exitFailed
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: %s: %v\n", r, err)
		return exitInternal
	case o.Result == host.OutcomeRevertIncomplete:
		// The trial's process could not revert it and ended: it stays
		// pending, the kernel as the trial left it.
		fmt.Fprintf(g.stderr, "netagent: %s: the trial's process (pid %d) could not revert it: %s: %s\n", r, t.PID, o.Result, termsafe.String(o.Reason))
		return exitFailed
	}
	fmt.Fprintf(g.stdout, "%s", o.Result)
	if o.Reason != "" {
		fmt.Fprintf(g.stdout, ": %s", termsafe.String(o.Reason))
	}
	fmt.Fprintln(g.stdout)
	if (o.Result == "confirmed") != (r == host.RequestConfirmed) {
		return exitFailed
	}
	return exitOK
}
