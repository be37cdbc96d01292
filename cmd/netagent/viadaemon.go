package main

// With --via-daemon, apply, plan and check go through the socket API of the
// daemon that serves the namespace: the intent files become the API's
// document, beside the daemon's intent directory.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/netagent/netagent/agent"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/target"
)

// daemonDocument is the intent files as one document for the socket API:
// a single file as it is, several parsed and merged. The daemon validates
// the document together with its own.
func daemonDocument(files []string) (json.RawMessage, error) {
	switch len(files) {
	case 0: // the daemon's own intent alone (plan, check)
		return nil, nil
	case 1:
		return os.ReadFile(files[0])
	}
	parsed := make(map[string]*intent.Intent, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		in, err := intent.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		parsed[filepath.Clean(f)] = in
	}
	merged, err := intent.Merge(parsed)
	if err != nil {
		return nil, err
	}
	return json.Marshal(merged)
}

// callDaemon sends a command with the intent files to the daemon h and
// returns its answer; nil after printing why (the exit code is code).
// with, if given, completes the request.
func callDaemon(g *globals, ctx context.Context, h target.Holder, command string, files []string, with ...func(*agent.Request)) (resp *agent.Response, code int) {
	doc, err := daemonDocument(files)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return nil, exitInternal // I/O: a file could not be read
	}
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return nil, exitFailed
	}
	req := agent.Request{Command: command, Intent: doc}
	for _, f := range with {
		f(&req)
	}
	resp, err = agent.Call(ctx, h.Socket, req)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: the daemon %s: %v\n", h, err)
		return nil, exitInternal
	}
	if resp.Error != "" {
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
func applyViaDaemon(g *globals, wait *time.Duration, vo *versionOpts) func(h target.Holder, files []string) int {
	return func(h target.Holder, files []string) int {
		ctx, cancel := context.WithTimeout(context.Background(), daemonTimeout+*wait)
		defer cancel()
		resp, code := callDaemon(g, ctx, h, agent.CmdApply, files, vo.request)
		if resp == nil {
			return code
		}
		fmt.Fprintf(g.stdout, "applied through the daemon %s: the files are its API document\n", h)
		pending := apiPending(resp.Status)
		for deadline := time.Now().Add(*wait); len(pending) > 0 && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond) // the daemon has no event stream to wait on
			st, err := agent.Call(ctx, h.Socket, agent.Request{Command: agent.CmdStatus})
			if err != nil || st.Status == nil {
				break
			}
			pending = apiPending(st.Status)
		}
		if len(pending) == 0 {
			fmt.Fprintf(g.stdout, "converged: %d operations\n", len(resp.Operations))
			return exitOK
		}
		for _, p := range pending {
			fmt.Fprintln(g.stderr, p)
		}
		fmt.Fprintf(g.stdout, "not converged: %d items failed or blocked\n", len(pending))
		return exitFailed
	}
}

// apiPending lists the items of the API's document that the daemon has
// not created, with why.
func apiPending(st *agent.Status) []string {
	if st == nil {
		return []string{"the daemon sent no status"}
	}
	var out []string
	for _, it := range st.Items {
		if it.File != "api" || it.State == "created" && it.LastError == "" {
			continue
		}
		why := it.BlockedOn
		if it.LastError != "" {
			why = it.LastError
		}
		out = append(out, fmt.Sprintf("%s: %s: %s", it.Item, it.State, why))
	}
	return out
}

// daemonOps prints the operations the daemon answered, as plan does, and
// the blocked items.
func daemonOps(g *globals, resp *agent.Response) {
	daemonDisruption(g, resp.Operations)
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
func planViaDaemon(g *globals) func(h target.Holder, files []string) int {
	return func(h target.Holder, files []string) int {
		ctx, cancel := context.WithTimeout(context.Background(), daemonTimeout)
		defer cancel()
		resp, code := callDaemon(g, ctx, h, agent.CmdPlan, files)
		if resp == nil {
			return code
		}
		fmt.Fprintf(g.stdout, "plan of the daemon %s with the files as its API document:\n", h)
		if len(resp.Operations) == 0 && len(resp.Blocked) == 0 {
			fmt.Fprintln(g.stdout, "no changes")
		}
		daemonOps(g, resp)
		if len(resp.Blocked) > 0 || slices.ContainsFunc(resp.Operations, func(op agent.OpResult) bool { return op.Error != "" }) {
			return exitFailed // as plan: something would not converge
		}
		return exitOK
	}
}

// checkViaDaemon asks the daemon to compare the kernel with its intent,
// the files being its API document.
func checkViaDaemon(g *globals) func(h target.Holder, files []string) int {
	return func(h target.Holder, files []string) int {
		ctx, cancel := context.WithTimeout(context.Background(), daemonTimeout)
		defer cancel()
		resp, code := callDaemon(g, ctx, h, agent.CmdCheck, files)
		if resp == nil {
			return code
		}
		if len(resp.Operations) == 0 && len(resp.Blocked) == 0 {
			fmt.Fprintf(g.stdout, "ok: running matches the daemon's intent (%s)\n", h)
			return exitOK
		}
		daemonOps(g, resp)
		daemonDiffers(g, resp.Differs)
		fmt.Fprintf(g.stdout, "%d items differ from the daemon's intent\n", len(resp.Operations)+len(resp.Blocked))
		return exitFailed
	}
}

// daemonDiffers prints the attributes that differ, as check does without
// a daemon: "item: Field: want X, have Y", marked for a report item.
func daemonDiffers(g *globals, differs []agent.DriftStatus) {
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
