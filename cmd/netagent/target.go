package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/oneshot"
)

// One writer at a time (see oneshot.Gate): a one-shot apply waits for a
// one-shot holder, up to --lock-timeout. When a daemon serves the target,
// apply, plan and check never act behind its back: they refuse, naming the
// daemon and its socket, or with --via-daemon send the intent to the
// daemon's socket API, where it becomes the API's document beside the
// daemon's intent directory.

// kernelOpts are the options of a command that acts on a namespace.
type kernelOpts struct {
	netns string
	// viaDaemon: send the command to the daemon that serves the target
	// instead of refusing (see gate).
	viaDaemon bool
	// lockTimeout bounds the wait for the target's lock (writers only).
	lockTimeout time.Duration
	// write: the command changes the kernel; prepare takes the target's
	// lock (held until the process ends) before it opens the target.
	write bool
	// daemon, when set, serves the command through the daemon's socket
	// API (--via-daemon); it gets the intent files and returns the exit
	// code.
	daemon func(h host.Holder, files []string) int
	// name is the command, for the lock's holder ("apply" when unset).
	name string
	// resolvConf is --resolv-conf.
	resolvConf string
}

// kernelFlags adds --netns to a command's flags, defaulting to the global
// option.
func kernelFlags(g *globals, fs *flag.FlagSet) *kernelOpts {
	k := &kernelOpts{}
	fs.StringVar(&k.netns, "netns", g.netns, "named network namespace to act on (default: the global --netns, else the host's)")
	return k
}

// options are the oneshot options of the command.
func (k *kernelOpts) options(g *globals) *oneshot.Options {
	return &oneshot.Options{Netns: k.netns, StateDir: k.stateDir(g), Command: k.name, Write: k.write,
		LockTimeout: k.lockTimeout, ResolvConf: k.resolvConf, Log: g.log}
}

// resolvConfFlag adds --resolv-conf to a command that renders the intent
// (plan, check, apply, try, run).
func resolvConfFlag(fs *flag.FlagSet, k *kernelOpts) {
	fs.Func("resolv-conf", "write the DNS servers and search domains of the intent and the leases to `PATH` "+
		"(never over a file netagent did not write; handed to systemd-resolved when PATH is its stub; default: DNS is left alone)",
		func(v string) error {
			if !filepath.IsAbs(v) {
				return errors.New("must be an absolute path")
			}
			k.resolvConf = v
			return nil
		})
}

// gateFlags adds --via-daemon to apply, plan and check, and --lock-timeout
// to apply; serve is the command done through the daemon.
func (k *kernelOpts) gateFlags(fs *flag.FlagSet, write bool, serve func(h host.Holder, files []string) int) {
	k.write, k.daemon = write, serve
	fs.BoolVar(&k.viaDaemon, "via-daemon", false,
		"when a daemon serves the namespace, send the intent to its socket API (it becomes the API's document) instead of refusing")
	if write {
		fs.DurationVar(&k.lockTimeout, "lock-timeout", oneshot.DefaultLockTimeout,
			"how long to wait while another netagent apply changes the namespace")
	}
}

// gate runs before the target is opened (oneshot.Gate). When a daemon
// serves the target, the command is refused or, with --via-daemon, done
// through the daemon (done is true then, with the exit code). A writer's
// lock is held until the process ends.
func (k *kernelOpts) gate(g *globals, files []string) (code int, done bool) {
	if k.daemon == nil {
		return exitOK, false
	}
	d, err := oneshot.Gate(k.options(g))
	switch {
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return exitInternal, true
	case d.Daemon != nil:
		return k.toDaemon(g, *d.Daemon, files), true
	case d.Busy != nil:
		g.log.WithField("holder", d.Busy.String()).Warn("another netagent is changing the namespace now: what this reads may change under it")
	}
	return exitOK, false
}

// takeLock takes the lock of dir for me (oneshot.TakeLock).
func takeLock(g *globals, dir string, me host.Holder, timeout time.Duration) (*host.Lock, *host.Holder, error) {
	return oneshot.TakeLock(&oneshot.Options{StateDir: dir, LockTimeout: timeout, Log: g.log}, me)
}

// daemonsOwn reports whether a reader (plan, check) may go without intent
// files: with --via-daemon, it then asks about the daemon's own intent.
func (k *kernelOpts) daemonsOwn() bool { return k.viaDaemon && !k.write && k.daemon != nil }

// toDaemon does the command through the daemon h, with --via-daemon, or
// refuses.
func (k *kernelOpts) toDaemon(g *globals, h host.Holder, files []string) int {
	if !k.viaDaemon {
		fmt.Fprintf(g.stderr, "netagent: the namespace is served by the daemon %s: acting on it here would go behind the daemon's back.\n"+
			"  Put the intent into the daemon's intent directory, or send it to the daemon with --via-daemon.\n", h)
		return exitInternal
	}
	g.log.WithField("daemon", h.String()).Debug("through the daemon's socket API")
	return k.daemon(h, files)
}

// lockDaemon takes the target's lock for the daemon's lifetime, with its
// socket in the lock file for apply, plan and check to find. It waits for
// a one-shot apply up to --lock-timeout, and fails at once when another
// daemon serves the target.
func lockDaemon(g *globals, o *daemonOpts) (*host.Lock, int) {
	socket, err := filepath.Abs(o.socket)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return nil, exitInternal
	}
	me := host.Holder{PID: os.Getpid(), Command: "run", Socket: socket, Since: time.Now()}
	lk, daemon, err := takeLock(g, o.kernel.stateDir(g), me, o.lockTimeout)
	switch {
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return nil, exitInternal
	case daemon != nil:
		fmt.Fprintf(g.stderr, "netagent: the namespace is already served by the daemon %s\n", daemon)
		return nil, exitInternal
	}
	return lk, exitOK
}

// parse parses the command line of a command that acts on the target
// with intent files (apply, plan, check, try) and returns its oneshot
// options, with the protection of prot (nil: none).
func (k *kernelOpts) parse(g *globals, fs *flag.FlagSet, args []string, prot *protectOpts) (*oneshot.Options, int, bool) {
	if code, ok := parseFlags(fs, args); !ok {
		return nil, code, false
	}
	if fs.NArg() == 0 && !k.daemonsOwn() {
		return nil, usageError(g, fs, "no intent file given"), false
	}
	o := k.options(g)
	o.Sized = sizeGC
	o.Recovered = func(r oneshot.Recovered) { printRecovered(g, r) }
	if prot != nil {
		o.Protect, o.Force = prot.links, prot.force
	}
	return o, exitOK, true
}

// prepare parses the command line and starts the command
// (oneshot.Start): the gate, the intent files loaded and the target
// opened with the intent rendered once. A nil target comes with the exit
// code to return.
func (k *kernelOpts) prepare(g *globals, fs *flag.FlagSet, args []string) (*oneshot.Target, int) {
	o, code, ok := k.parse(g, fs, args, nil)
	if !ok {
		return nil, code
	}
	t, err := oneshot.Start(context.Background(), o, fs.Args())
	if err != nil {
		return nil, k.failed(g, err, fs.Args())
	}
	return t, exitOK
}

// failed prints why a command failed and returns its exit code: a daemon
// serving the target does the command (--via-daemon, with the files) or
// refuses it (gate).
func (k *kernelOpts) failed(g *globals, err error, files []string) int {
	var de *oneshot.DaemonError
	switch {
	case errors.As(err, &de):
		return k.toDaemon(g, de.Holder, files)
	case errors.Is(err, oneshot.ErrNoIntent):
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return exitUsage
	}
	return printError(g, "", err)
}

// printRecovered says what the first step found of a pending trial.
func printRecovered(g *globals, r oneshot.Recovered) {
	if r.Recovery != nil {
		fmt.Fprintf(g.stderr, "netagent: %s\n", oneshot.RecoveryNote(r.Recovery))
	}
	if note := r.TrialNote(); note != "" {
		fmt.Fprintf(g.stderr, "netagent: %s\n", note)
	}
}

// exitError is an error already printed, with its exit code.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// printError prints err, prefixed ("apply: "), and returns its exit code:
// an invalid intent's every problem (exitFailed), a usage error, a
// failed revert of a pending trial; anything else is exitInternal.
func printError(g *globals, prefix string, err error) int {
	var inv *oneshot.InvalidError
	var use *oneshot.UsageError
	var rec *oneshot.RecoverError
	var done exitError
	switch {
	case errors.As(err, &done):
		return done.code
	case errors.As(err, &inv):
		printIntentErrors(g, inv.Err)
		return exitFailed
	case errors.As(err, &use):
		fmt.Fprintf(g.stderr, "netagent: %v\n", use)
		return exitUsage
	case errors.As(err, &rec):
		fmt.Fprintf(g.stderr, "netagent: %v\n", rec)
		if rec.Record != nil {
			fmt.Fprintf(g.stderr, "netagent: recording the failed revert: %v\n", rec.Record)
		}
		return exitInternal
	}
	fmt.Fprintf(g.stderr, "netagent: %s%v\n", prefix, err)
	return exitInternal
}

// printIntentErrors prints every problem of an intent, one per line.
func printIntentErrors(g *globals, err error) {
	fes := intent.FieldErrors(err)
	for _, fe := range fes {
		fmt.Fprintln(g.stderr, fe)
	}
	if len(fes) == 0 {
		fmt.Fprintln(g.stderr, err)
	}
	fmt.Fprintf(g.stderr, "netagent: invalid intent: %d problems; nothing was changed\n", max(len(fes), 1))
}

// open opens the namespace for the command. The state directory follows a
// command-level --netns unless the global --state-dir was given.
func (k *kernelOpts) open(g *globals) (*host.Runtime, int) {
	rt, err := host.Open(k.netns, k.stateDir(g), g.log)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return nil, exitInternal
	}
	return rt, exitOK
}

// stateDir is the global --state-dir, or, when that was left to its
// default and the command names another namespace, that namespace's
// default.
func (k *kernelOpts) stateDir(g *globals) string {
	if k.netns != g.netns && g.stateDir == defaultStateDir(g.netns) {
		return defaultStateDir(k.netns)
	}
	return g.stateDir
}
