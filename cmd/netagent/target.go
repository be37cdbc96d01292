package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/netagent/netagent/agent"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/runtime"
)

// One writer at a time: every command that changes a target (apply, the
// daemon) holds the target's lock (runtime.TryLock: an flock on
// <state dir>/lock, released by the kernel when the holder dies). A
// one-shot apply waits for a one-shot holder, up to --lock-timeout. When a
// daemon serves the target, apply, plan and check never act behind its
// back: they refuse, naming the daemon and its socket, or with --via-daemon
// send the intent to the daemon's socket API, where it becomes the API's
// document beside the daemon's intent directory.

// defaultLockTimeout bounds the wait for another writer.
const defaultLockTimeout = 30 * time.Second

// gateFlags adds --via-daemon to apply, plan and check, and --lock-timeout
// to apply; serve is the command done through the daemon.
func (k *kernelOpts) gateFlags(fs *flag.FlagSet, write bool, serve func(h runtime.Holder, files []string) int) {
	k.write, k.daemon = write, serve
	fs.BoolVar(&k.viaDaemon, "via-daemon", false,
		"when a daemon serves the namespace, send the intent to its socket API (it becomes the API's document) instead of refusing")
	if write {
		fs.DurationVar(&k.lockTimeout, "lock-timeout", defaultLockTimeout,
			"how long to wait while another netagent apply changes the namespace")
	}
}

// gate runs before the target is opened. When a daemon serves the target,
// the command is refused or, with --via-daemon, done through the daemon
// (done is true then, with the exit code). A writer takes the target's
// lock, waiting for another one-shot writer up to --lock-timeout; a reader
// takes none.
func (k *kernelOpts) gate(g *globals, files []string) (code int, done bool) {
	if k.daemon == nil {
		return exitOK, false
	}
	dir := k.stateDir(g)
	if !k.write {
		h, err := runtime.HolderOf(dir)
		switch {
		case err != nil:
			fmt.Fprintf(g.stderr, "netagent: %v\n", err)
			return exitInternal, true
		case h != nil && h.Daemon():
			return k.toDaemon(g, *h, files), true
		case h != nil:
			g.log.WithField("holder", h.String()).Warn("another netagent is changing the namespace now: what this reads may change under it")
		}
		return exitOK, false
	}
	me := runtime.Holder{PID: os.Getpid(), Command: "apply", Since: time.Now()}
	lk, h, err := runtime.TryLock(dir, me)
	switch {
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return exitInternal, true
	case lk != nil:
		return exitOK, false
	case h.Daemon():
		return k.toDaemon(g, *h, files), true
	}
	g.log.WithField("holder", h.String()).Info("another netagent is changing the namespace; waiting for it")
	ctx, cancel := context.WithTimeoutCause(context.Background(), k.lockTimeout,
		fmt.Errorf("gave up after --lock-timeout %v", k.lockTimeout))
	defer cancel()
	if _, err := runtime.WaitLock(ctx, dir, me); err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return exitInternal, true
	}
	return exitOK, false // the lock is held until the process ends
}

// toDaemon does the command through the daemon h, with --via-daemon, or
// refuses.
func (k *kernelOpts) toDaemon(g *globals, h runtime.Holder, files []string) int {
	if !k.viaDaemon {
		fmt.Fprintf(g.stderr, "netagent: the namespace is served by the daemon %s: acting on it here would go behind the daemon's back.\n"+
			"  Put the intent into the daemon's intent directory, or send it to the daemon with --via-daemon.\n", h)
		return exitInternal
	}
	g.log.WithField("daemon", h.String()).Debug("through the daemon's socket API")
	return k.daemon(h, files)
}

// daemonDocument is the intent files as one document for the socket API:
// a single file as it is, several parsed and merged. The daemon validates
// the document together with its own.
func daemonDocument(files []string) (json.RawMessage, error) {
	if len(files) == 1 {
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
func callDaemon(g *globals, ctx context.Context, h runtime.Holder, command string, files []string) (resp *agent.Response, code int) {
	doc, err := daemonDocument(files)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return nil, exitFailed
	}
	resp, err = agent.Call(ctx, h.Socket, agent.Request{Command: command, Intent: doc})
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: the daemon %s: %v\n", h, err)
		return nil, exitInternal
	}
	if resp.Error != "" {
		for _, p := range resp.Problems {
			fmt.Fprintln(g.stderr, p)
		}
		fmt.Fprintf(g.stderr, "netagent: the daemon %s answered: %s; nothing was changed\n", h, resp.Error)
		return nil, exitFailed
	}
	return resp, exitOK
}

// daemonTimeout bounds one exchange with the daemon.
const daemonTimeout = time.Minute

// applyViaDaemon makes the files the daemon's API document, then waits up
// to wait for the daemon to report every item of that document created.
func applyViaDaemon(g *globals, wait *time.Duration) func(h runtime.Holder, files []string) int {
	return func(h runtime.Holder, files []string) int {
		ctx, cancel := context.WithTimeout(context.Background(), daemonTimeout+*wait)
		defer cancel()
		resp, code := callDaemon(g, ctx, h, agent.CmdApply, files)
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
	for i, op := range resp.Operations {
		fmt.Fprintf(g.stdout, "%3d. %s %s\n       %s\n", i+1, op.Op, op.Item, op.Value)
	}
	for _, b := range resp.Blocked {
		fmt.Fprintf(g.stdout, "  !  %s: blocked: %s\n", b.Item, b.Reason)
	}
}

// planViaDaemon asks the daemon what it would do with the files as its
// API document.
func planViaDaemon(g *globals) func(h runtime.Holder, files []string) int {
	return func(h runtime.Holder, files []string) int {
		ctx, cancel := context.WithTimeout(context.Background(), daemonTimeout)
		defer cancel()
		resp, code := callDaemon(g, ctx, h, agent.CmdPlan, files)
		if resp == nil {
			return code
		}
		fmt.Fprintf(g.stdout, "plan of the daemon %s with the files as its API document:\n", h)
		if len(resp.Operations) == 0 {
			fmt.Fprintln(g.stdout, "no changes")
		}
		daemonOps(g, resp)
		return exitOK
	}
}

// checkViaDaemon asks the daemon to compare the kernel with its intent,
// the files being its API document.
func checkViaDaemon(g *globals) func(h runtime.Holder, files []string) int {
	return func(h runtime.Holder, files []string) int {
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
		fmt.Fprintf(g.stdout, "%d items differ from the daemon's intent\n", len(resp.Operations)+len(resp.Blocked))
		return exitFailed
	}
}

// lockDaemon takes the target's lock for the daemon's lifetime, with its
// socket in the lock file for apply, plan and check to find. It waits for
// a one-shot apply up to --lock-timeout, and fails at once when another
// daemon serves the target.
func lockDaemon(g *globals, o *daemonOpts) (*runtime.Lock, int) {
	socket, err := filepath.Abs(o.socket)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return nil, exitInternal
	}
	dir := o.kernel.stateDir(g)
	me := runtime.Holder{PID: os.Getpid(), Command: "run", Socket: socket, Since: time.Now()}
	lk, h, err := runtime.TryLock(dir, me)
	switch {
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return nil, exitInternal
	case lk != nil:
		return lk, exitOK
	case h.Daemon():
		fmt.Fprintf(g.stderr, "netagent: the namespace is already served by the daemon %s\n", h)
		return nil, exitInternal
	}
	g.log.WithField("holder", h.String()).Info("another netagent is changing the namespace; waiting for it")
	ctx, cancel := context.WithTimeoutCause(context.Background(), o.lockTimeout,
		fmt.Errorf("gave up after --lock-timeout %v", o.lockTimeout))
	defer cancel()
	lk, err = runtime.WaitLock(ctx, dir, me)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return nil, exitInternal
	}
	return lk, exitOK
}
