package main

// With --via-daemon, apply, plan and check go through the socket API of the
// daemon that serves the namespace: the intent files become the API's
// document, beside the daemon's intent directory.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/netagent/netagent/agent"
	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/internal/termsafe"
)

// callDaemon sends a command with the intent files to the daemon h and
// returns its answer; nil after printing why (the exit code is code).
// with, if given, completes the request.
func callDaemon(g *globals, ctx context.Context, h host.Holder, command string, files []string, with ...func(*api.Request)) (resp *api.Response, code int) {
	doc, err := oneshot.DaemonDocument(files)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return nil, exitInternal // I/O: a file could not be read
	}
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return nil, exitFailed
	}
	req := api.Request{Command: command, Intent: doc}
	for _, f := range with {
		f(&req)
	}
	resp, err = agent.Call(ctx, h.Socket, req)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: the daemon %s: %v\n", h, err)
		return nil, exitInternal
	}
	if resp.Error != "" {
		termsafe.Sanitize(resp)
		for _, p := range resp.Problems {
			fmt.Fprintln(g.stderr, p)
		}
		fmt.Fprintf(g.stderr, "netagent: the daemon %s answered: %s; nothing was changed\n", h, resp.Error)
		if resp.Conflict {
			return nil, exitConflict
		}
		return nil, exitFailed
	}
	return resp, exitOK
}

// daemonTimeout bounds one exchange with the daemon.
const daemonTimeout = time.Minute

// applyViaDaemon makes the files the daemon's API document, then waits up
// to wait for the daemon to report every item of that document created.
// It prints what apply prints: the operations the daemon ran (--all-ops:
// every one) and the summary, or apply's JSON document (--json).
func applyViaDaemon(g *globals, wait time.Duration, vo *versionOpts, h host.Holder, files []string) int {
	ctx, cancel := context.WithTimeout(context.Background(), daemonTimeout+wait)
	defer cancel()
	start := time.Now()
	resp, code := callDaemon(g, ctx, h, api.CmdApply, files, vo.request)
	if resp == nil {
		return code
	}
	pending := waitAPIItems(ctx, h.Socket, wait, oneshot.APIPending(resp.Status))
	doc := oneshot.DaemonApplyDoc(resp.Operations, pending, time.Since(start))
	if resp.Disruption != nil { // as a one-shot apply's
		doc.Disruption = &oneshot.DisruptionDoc{DisruptionSummary: *resp.Disruption, ProtectedTouched: []string{}}
	}
	if g.asJSON {
		if writeJSON(g, doc) != nil {
			return exitInternal
		}
	} else {
		termsafe.Sanitize(resp)
		termsafe.Sanitize(&doc)
		fmt.Fprintf(g.stdout, "applied through the daemon %s: the files are its API document\n", h)
		printDaemonOps(g, resp.Operations, g.allOps)
		printDaemonApplied(g, doc)
	}
	if !doc.Converged {
		return exitFailed
	}
	return exitOK
}

// waitAPIItems waits up to wait for the daemon to create the items of the
// API's document that are pending, following its event stream (status
// --watch's): at each change of an item it asks the status again. It
// returns those still pending at the end.
func waitAPIItems(ctx context.Context, socket string, wait time.Duration, pending []oneshot.ProblemDoc) []oneshot.ProblemDoc {
	if len(pending) == 0 || wait <= 0 {
		return pending
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	w, err := agent.Watch(ctx, socket)
	if err != nil {
		return pending
	}
	defer w.Close()
	for len(pending) > 0 {
		e, err := w.Next()
		if err != nil {
			return pending // the wait is over, or the daemon went
		}
		switch {
		case e.Kind == api.EventStatus && e.Status != nil: // the stream's first: the whole status
			pending = oneshot.APIPending(e.Status)
		case e.Kind == api.EventItem || e.Kind == api.EventMissed:
			st, err := agent.Call(ctx, socket, api.Request{Command: api.CmdStatus})
			if err != nil || st.Status == nil {
				return pending
			}
			pending = oneshot.APIPending(st.Status)
		}
	}
	return nil
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
		fmt.Fprintf(g.stdout, "converged: %d operations%s\n", len(doc.Operations), tally)
		return
	}
	for _, p := range doc.Problems {
		fmt.Fprintf(g.stderr, "%s: %s: %s\n", p.Item, p.State, p.Reason)
	}
	fmt.Fprintf(g.stdout, "not converged: %d items failed or blocked (%d operations)%s\n", len(doc.Problems), len(doc.Operations), tally)
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

// planViaDaemon asks the daemon what it would do with the files as its
// API document.
func planViaDaemon(g *globals) func(h host.Holder, files []string) int {
	return func(h host.Holder, files []string) int {
		ctx, cancel := context.WithTimeout(context.Background(), daemonTimeout)
		defer cancel()
		resp, code := callDaemon(g, ctx, h, api.CmdPlan, files)
		if resp == nil {
			return code
		}
		termsafe.Sanitize(resp)
		fmt.Fprintf(g.stdout, "plan of the daemon %s with the files as its API document:\n", h)
		if len(resp.Operations) == 0 && len(resp.Blocked) == 0 {
			fmt.Fprintln(g.stdout, "no changes")
		}
		daemonOps(g, resp)
		if len(resp.Blocked) > 0 || slices.ContainsFunc(resp.Operations, func(op api.OpResult) bool { return op.Error != "" }) {
			return exitFailed // as plan: something would not converge
		}
		return exitOK
	}
}

// checkViaDaemon asks the daemon to compare the kernel with its intent,
// the files being its API document; with all or asJSON it lists every
// item as check --all and check --json do.
func checkViaDaemon(g *globals, all, asJSON *bool) func(h host.Holder, files []string) int {
	return func(h host.Holder, files []string) int {
		ctx, cancel := context.WithTimeout(context.Background(), daemonTimeout)
		defer cancel()
		resp, code := callDaemon(g, ctx, h, api.CmdCheck, files)
		if resp == nil {
			return code
		}
		if *all || *asJSON {
			return printCheckItems(g, resp.Check, resp.LeasesRefused, *asJSON)
		}
		termsafe.Sanitize(resp)
		if len(resp.Operations) == 0 && len(resp.Blocked) == 0 && len(resp.LeasesRefused) == 0 {
			fmt.Fprintf(g.stdout, "ok: running matches the daemon's intent (%s)\n", h)
			return exitOK
		}
		daemonOps(g, resp)
		daemonDiffers(g, resp.Differs)
		printRefusals(g, resp.LeasesRefused)
		fmt.Fprintf(g.stdout, "%d items differ from the daemon's intent%s\n", len(resp.Operations)+len(resp.Blocked), refusedTally(len(resp.LeasesRefused)))
		return exitFailed
	}
}

// daemonDiffers prints the attributes that differ, as check does without
// a daemon: "item: Field: want X, have Y", marked for a report item.
func daemonDiffers(g *globals, differs []status.DriftStatus) {
	for _, d := range differs {
		mark := ""
		if d.Policy != "" {
			mark = " (drift: " + string(d.Policy) + ")"
		}
		for _, f := range d.Fields {
			fmt.Fprintf(g.stdout, "%s: %s: want %s, have %s%s\n", d.Item, f.Field, f.Intended, f.Running, mark)
		}
	}
}
