package main

// `netagent try --via-daemon`: the trial runs in the daemon (agent/trial),
// which applies the document as its API document, journals the kernel's
// before-images (the same target trial code as the one-shot try), runs the
// probes, and reverts at the deadline by itself (oneshot.TryViaDaemon). In
// the foreground the command shows the countdown and waits like the
// one-shot: Enter (on a terminal), `netagent confirm`, or
// --confirm-when-probes-pass confirm; the deadline, a signal or `netagent
// rollback` revert. With --detach it returns once the trial is applied:
// the daemon keeps the deadline.

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/internal/termsafe"
)

// daemonTrialOpts are try's options that only --via-daemon uses.
type daemonTrialOpts struct {
	name   string
	detach bool
}

// tryViaDaemon runs the trial of files in the daemon h.
func tryViaDaemon(g *globals, o *oneshot.TryOptions, d *daemonTrialOpts, vo *versionOpts) func(h host.Holder, files []string) int {
	return func(h host.Holder, files []string) int {
		if g.asJSON {
			fmt.Fprintln(g.stderr, "netagent: try: --json is the one-shot try's: through the daemon, read status --json after it")
			return exitUsage
		}
		resp, err := oneshot.TryViaDaemon(h, files, o, d.name, vo.request)
		if err != nil {
			return daemonFail(g, err)
		}
		termsafe.Sanitize(resp)
		for _, op := range resp.Operations { // kept with --keep-partial
			if op.Error != "" {
				fmt.Fprintf(g.stderr, "%s: %s failed: %s\n", op.Item, op.Op, op.Error)
			}
		}
		st := resp.Status
		if st == nil || st.Trial == nil {
			return daemonTrialEnded(g, st)
		}
		fmt.Fprintf(g.stdout, "trial applied through the daemon %s (%d operations); confirming writes %s\n", h, len(resp.Operations), st.Trial.Name)
		if o.AutoConfirm { // the daemon answered once the probes passed
			return daemonTrialRequest(g, h, api.CmdConfirm, st.Trial.ID)
		}
		if d.detach {
			fmt.Fprintf(g.stdout, "reverts at %s unless `netagent confirm`\n", st.Trial.Deadline.Format(time.RFC3339))
			return exitOK
		}
		return waitDaemonTrial(g, h, st.Trial)
	}
}

// waitDaemonTrial waits in the foreground for the daemon's trial tr to
// end, confirming it on Enter and reverting it on a signal.
func waitDaemonTrial(g *globals, h host.Holder, tr *status.TrialStatus) int {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)
	var enter <-chan struct{}
	tty := isTerminal(os.Stdin) && isTerminal(os.Stderr)
	if tty {
		enter = readEnter()
	}
	fmt.Fprintf(g.stderr, "confirm with `netagent confirm`%s before %s, or it reverts\n",
		map[bool]string{true: " or Enter", false: ""}[tty], tr.Deadline.Format(time.RFC3339))
	// The daemon has no event stream: its status is polled.
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-enter:
			return daemonTrialRequest(g, h, api.CmdConfirm, tr.ID)
		case s := <-sig:
			fmt.Fprintf(g.stderr, "\ninterrupted by %v: reverting\n", s)
			if code := daemonTrialRequest(g, h, api.CmdRollback, tr.ID); code != exitOK {
				return code
			}
			return exitRevertedTimeout
		case <-tick.C:
			if code, ended := pollDaemonTrial(g, h, tr, tty); ended {
				return code
			}
		}
	}
}

// pollDaemonTrial reports whether the daemon's trial tr has ended (and
// how: try's exit code), showing the countdown meanwhile on a terminal.
func pollDaemonTrial(g *globals, h host.Holder, tr *status.TrialStatus, tty bool) (code int, ended bool) {
	st, err := oneshot.PollDaemonTrial(h, tr)
	if err != nil {
		fmt.Fprintf(g.stderr, "\nnetagent: %v; it keeps the trial's deadline\n", err)
		return exitInternal, true
	}
	if st != nil {
		termsafe.Sanitize(st)
		return daemonTrialEnded(g, st), true
	}
	if tty {
		fmt.Fprintf(g.stderr, "\rreverting in %3ds (Enter confirms) ", int(time.Until(tr.Deadline).Round(time.Second).Seconds()))
	}
	return exitOK, false
}

// daemonTrialEnded reports how the daemon's trial ended (Status.LastTrial)
// and returns try's exit code for it.
func daemonTrialEnded(g *globals, st *status.Status) int {
	if st == nil || st.LastTrial == nil {
		fmt.Fprintln(g.stderr, "netagent: the daemon's trial ended; its outcome is unknown")
		return exitInternal
	}
	o := st.LastTrial
	if o.Result == "confirmed" {
		fmt.Fprintf(g.stdout, "\nconfirmed: %s written\n", o.File)
		return exitOK
	}
	fmt.Fprintf(g.stderr, "\nreverted: %s\n", o.Reason)
	return revertedCode(o.Reason)
}

// revertedCode is try's exit code for a revert's reason as the daemon
// words it (trial.FaultOf).
func revertedCode(reason string) int { return faultCode(trial.FaultOf(reason)) }

// daemonTrialRequest sends confirm or rollback (command) of the pending
// trial id to the daemon h and prints the outcome.
func daemonTrialRequest(g *globals, h host.Holder, command, id string) int {
	o, err := oneshot.DaemonTrialRequest(h, command, id)
	var refused *oneshot.DaemonRefusedError
	switch {
	case errors.As(err, &refused):
		termsafe.Sanitize(refused.Resp)
		fmt.Fprintf(g.stderr, "netagent: %s: %v\n", command, err)
		return exitFailed
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return exitInternal
	}
	if g.asJSON {
		r := host.RequestReverted
		if command == api.CmdConfirm {
			r = host.RequestConfirmed
		}
		if writeJSON(g, oneshot.DaemonAnswerDocOf(o, id, r)) != nil {
			return exitInternal
		}
		return exitOK
	}
	if o != nil {
		termsafe.Sanitize(o)
		fmt.Fprintf(g.stdout, "%s", o.Result)
		if o.Reason != "" {
			fmt.Fprintf(g.stdout, ": %s", o.Reason)
		}
		if o.File != "" {
			fmt.Fprintf(g.stdout, ": %s written", o.File)
		}
		fmt.Fprintln(g.stdout)
	}
	return exitOK
}
