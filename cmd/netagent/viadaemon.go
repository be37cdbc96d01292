package main

// With --via-daemon, apply, plan and check go through the socket API of the
// daemon that serves the namespace (oneshot.ApplyViaDaemon, PlanViaDaemon,
// CheckViaDaemon): for apply (and plan, as a dry run) the intent files
// become the API's document, beside the daemon's intent directory; check
// compares the kernel with the files alone and changes nothing. Here its
// answers are printed.

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/internal/plural"
	"github.com/netagent/netagent/internal/termsafe"
)

// daemonFail prints why the daemon was not asked or refused, and returns
// the exit code: a file not read or no answer exitInternal, a conflict
// exitConflict, an invalid document or a refusal exitFailed.
func daemonFail(g *globals, err error) int {
	var refused *oneshot.DaemonRefusedError
	if !errors.As(err, &refused) {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		if errors.As(err, new(*fs.PathError)) || errors.As(err, new(*oneshot.DaemonCallError)) {
			return exitInternal
		}
		return exitFailed
	}
	termsafe.Sanitize(refused.Resp)
	for _, p := range refused.Resp.Problems {
		fmt.Fprintln(g.stderr, p)
	}
	fmt.Fprintf(g.stderr, "netagent: %v; nothing was changed\n", err)
	if refused.Resp.Conflict {
		return exitConflict
	}
	if refused.Resp.ProbesFailing {
		return exitRefused
	}
	return exitFailed
}

// applyViaDaemon prints what apply prints of an apply through the daemon:
// the operations the daemon ran (--all-ops: every one) and the summary,
// or apply's JSON document (--json).
func applyViaDaemon(g *globals, wait time.Duration, vo *versionOpts, h host.Holder, files []string) int {
	res, err := oneshot.ApplyViaDaemon(h, files, wait, vo.request)
	if err != nil {
		return daemonFail(g, err)
	}
	if g.asJSON {
		if writeJSON(g, res.Doc) != nil {
			return exitInternal
		}
	} else {
		termsafe.Sanitize(res.Resp)
		termsafe.Sanitize(&res.Doc)
		fmt.Fprintf(g.stdout, "applied through the daemon %s: the files are its API document\n", h)
		printDaemonOps(g, res.Resp.Operations, g.allOps)
		printDaemonApplied(g, res.Doc)
	}
	return exitOf(res.Outcome)
}

// printDaemonOps prints the operations of an apply through the daemon as
// printAppliedOps prints a one-shot's.
func printDaemonOps(g *globals, ops []api.OpResult, all bool) {
	w := bufio.NewWriterSize(g.stdout, 64<<10)
	defer w.Flush()
	for i, op := range ops {
		if !all && i == opsShown {
			fmt.Fprintf(w, "     ... and %d more operations (--all-ops prints every one)\n", len(ops)-i)
			return
		}
		head := op.Op + " " + op.Item
		if op.Recreate {
			head += " (recreate)"
		}
		if op.Error != "" {
			head += ": " + op.Error
		}
		fmt.Fprintf(w, "%3d. %s\n       %s\n", i+1, head, op.Value)
		if line := daemonDisruptionLine(op); line != "" {
			fmt.Fprintf(w, "       %s\n", line)
		}
	}
}

// printDaemonApplied prints apply's summary of an apply through the
// daemon, and the items not created on stderr.
func printDaemonApplied(g *globals, doc oneshot.ApplyDoc) {
	tally := fmt.Sprintf(": %d done, %d failed, %d blocked in %s", doc.Done, doc.Failed, doc.Blocked, doc.Duration)
	if doc.Converged {
		fmt.Fprintf(g.stdout, "converged: %s%s\n", plural.N(len(doc.Operations), "operation"), tally)
		return
	}
	for _, p := range doc.Problems {
		fmt.Fprintf(g.stderr, "%s: %s: %s\n", p.Item, p.State, p.Reason)
	}
	fmt.Fprintf(g.stdout, "not converged: %s failed or blocked (%s)%s\n", plural.N(len(doc.Problems), "item"), plural.N(len(doc.Operations), "operation"), tally)
}

// daemonOps prints the operations the daemon answered, as plan does, and
// the blocked items.
func daemonOps(g *globals, resp *api.Response) {
	daemonDisruption(g, resp)
	for i, op := range resp.Operations {
		fmt.Fprintf(g.stdout, "%3d. %s %s\n       %s\n", i+1, op.Op, op.Item, op.Value)
		if line := daemonDisruptionLine(op); line != "" {
			fmt.Fprintf(g.stdout, "       %s\n", line)
		}
	}
	for _, op := range resp.Operations {
		if op.Error != "" {
			fmt.Fprintf(g.stdout, "  !  %s: predicted to fail: %s failed: %s\n", op.Item, op.Op, op.Error)
		}
	}
	for _, b := range resp.Blocked {
		fmt.Fprintf(g.stdout, "  !  %s: blocked: %s\n", b.Item, b.Reason)
	}
}

// planViaDaemon prints what the daemon would do with the files as its
// API document.
func planViaDaemon(g *globals) func(h host.Holder, files []string) int {
	return func(h host.Holder, files []string) int {
		resp, outcome, err := oneshot.PlanViaDaemon(h, files)
		if err != nil {
			return daemonFail(g, err)
		}
		termsafe.Sanitize(resp)
		fmt.Fprintf(g.stdout, "plan of the daemon %s with the files as its API document:\n", h)
		if len(resp.Operations) == 0 && len(resp.Blocked) == 0 {
			fmt.Fprintln(g.stdout, "no changes")
		}
		daemonOps(g, resp)
		return exitOf(outcome)
	}
}

// checkViaDaemon prints the daemon's comparison of the kernel with the
// files (without files: with the daemon's own intent) as a one-shot check
// prints its own: the notes, then each item that differs, is missing or
// extra; with all or asJSON it lists every item as check --all and check
// --json do. Nothing is changed.
func checkViaDaemon(g *globals, all, asJSON *bool) func(h host.Holder, files []string) int {
	return func(h host.Holder, files []string) int {
		resp, outcome, err := oneshot.CheckViaDaemon(h, files)
		if err != nil {
			return daemonFail(g, err)
		}
		if *all || *asJSON {
			return printCheckItems(g, resp.Check, resp.LeasesRefused, *asJSON)
		}
		termsafe.Sanitize(resp)
		against := "the daemon's intent"
		if len(files) > 0 {
			against = "the intent"
		}
		if outcome == oneshot.Converged {
			fmt.Fprintf(g.stdout, "ok: running matches %s (%s, compared by the daemon %s)\n", against, plural.N(len(resp.Check), "item"), h)
			return exitOK
		}
		differing := 0
		for _, ci := range resp.Check {
			switch ci.State {
			case status.CheckForeign:
				fmt.Fprintf(g.stdout, "note: %s: left alone\n", ci.Item)
			case status.CheckIgnored:
				fmt.Fprintf(g.stdout, "note: %s: differs, ignored (drift: ignore)\n", ci.Item)
			}
		}
		for _, ci := range resp.Check {
			if text := oneshot.CheckItemText(ci); text != "" {
				fmt.Fprintln(g.stdout, text)
				differing++
			}
		}
		printRefusals(g, resp.LeasesRefused)
		fmt.Fprintf(g.stdout, "%s from %s%s\n", differ(differing), against, refusedTally(len(resp.LeasesRefused)))
		return exitFailed
	}
}
