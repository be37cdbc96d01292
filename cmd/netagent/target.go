package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
)

// One writer at a time (see oneshot.Gate): a one-shot apply waits for a
// one-shot holder, up to --lock-timeout. When a daemon serves the target,
// apply, plan and check never act behind its back: they refuse, naming the
// daemon and its socket, or with --via-daemon send the intent to the
// daemon's socket API, where it becomes the API's document beside the
// daemon's intent directory.

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

// takeLock takes the lock of dir, netns's state directory, for me
// (oneshot.TakeLock).
func takeLock(g *globals, netns, dir string, me host.Holder, timeout time.Duration) (*host.Lock, *host.Holder, error) {
	return oneshot.TakeLock(&oneshot.Options{Netns: netns, StateDir: dir, LockTimeout: timeout, Log: g.log}, me)
}

// socketFlag adds --socket to a command that asks the daemon (status,
// metrics).
func socketFlag(fs *flag.FlagSet) *string {
	return fs.String("socket", "", "unix socket of the daemon's API, at `PATH` "+
		"(default: the one the lock of the namespace's state directory names, as --via-daemon finds it)")
}

// findDaemon finds the daemon of the command's namespace and state
// directory (oneshot.FindDaemon), or the one on socket when given.
func findDaemon(g *globals, socket string) (host.Holder, error) {
	return oneshot.FindDaemon(g.netns, g.stateDir, socket)
}

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
	lk, daemon, err := takeLock(g, o.kernel.netns, o.kernel.stateDir(g), me, o.lockTimeout)
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
