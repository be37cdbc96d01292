package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/internal/termsafe"
)

func init() {
	register(&command{
		name:    "confirm",
		summary: "make the running trial (`netagent try`, also through the daemon) permanent",
		usage:   "[--netns NAME] [--json]",
		run:     runConfirm,
	})
}

func runConfirm(g *globals, args []string) int {
	fs := newFlagSet(g, "confirm", "")
	k := kernelFlags(g, fs)
	fs.BoolVar(&g.asJSON, "json", false, "print how the trial ended as JSON (oneshot.AnswerDoc)")
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
func rollbackTrial(g *globals, k *kernelOpts) (code int, handled bool) {
	stateDir := k.stateDir(g)
	t, err := host.PendingTrial(stateDir)
	switch {
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: rollback: %v\n", err)
		return exitInternal, true
	case t == nil:
		return exitOK, false
	}
	if h, _ := host.HolderOf(stateDir); h == nil {
		o := k.options(g)
		res, err := oneshot.RecoverTrial(context.Background(), o)
		code := printRecover(g, res, err, false)
		if g.asJSON {
			return printRecoverJSON(g, []oneshot.RecoverDoc{oneshot.RecoverDocOf(o, res, err)}, false, code), true
		}
		return code, true
	}
	return requestTrial(g, stateDir, host.RequestReverted), true
}

// requestTrial asks the process running the target's trial to confirm or
// revert it, and waits until it did.
func requestTrial(g *globals, stateDir string, r host.Request) int {
	t, err := oneshot.FindRunningTrial(stateDir)
	switch {
	case errors.Is(err, host.ErrNoTrial) || errors.Is(err, host.ErrTrialPending):
		fmt.Fprintf(g.stderr, "netagent: %s: %v\n", r, err)
		return exitFailed
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: %s: %v\n", r, err)
		return exitInternal
	}
	if id := t.DaemonTrial(); id != "" { // the daemon's trial (try --via-daemon): over its socket
		command := api.CmdRollback
		if r == host.RequestConfirmed {
			command = api.CmdConfirm
		}
		return daemonTrialRequest(g, t.Holder, command, id)
	}
	o, err := t.Ask(stateDir, r)
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
		fmt.Fprintf(g.stderr, "netagent: %s: the trial's process (pid %d) could not revert it: %s: %s\n", r, t.Trial.PID, o.Result, termsafe.String(o.Reason))
		if g.asJSON {
			doc := oneshot.AnswerDocOf(o, r)
			doc.Answered = false
			writeJSON(g, doc)
		}
		return exitFailed
	}
	return printAnswer(g, o, r)
}

// printAnswer prints how the trial ended on request r: exitFailed when
// not as asked.
func printAnswer(g *globals, o *host.Outcome, r host.Request) int {
	if g.asJSON {
		if writeJSON(g, oneshot.AnswerDocOf(o, r)) != nil {
			return exitInternal
		}
	} else {
		fmt.Fprintf(g.stdout, "%s", o.Result)
		if o.Reason != "" {
			fmt.Fprintf(g.stdout, ": %s", termsafe.String(o.Reason))
		}
		fmt.Fprintln(g.stdout)
	}
	if !oneshot.Answered(o, r) {
		return exitFailed
	}
	return exitOK
}
