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
)

// One writer at a time: every command that changes a target (apply, the
// daemon) holds the target's lock (host.TryLock: an flock on
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
func (k *kernelOpts) gateFlags(fs *flag.FlagSet, write bool, serve func(h host.Holder, files []string) int) {
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
	if !k.write {
		return k.gateReader(g, files)
	}
	me := host.Holder{PID: os.Getpid(), Command: k.command(), Since: time.Now()}
	_, daemon, err := takeLock(g, k.stateDir(g), me, k.lockTimeout)
	switch {
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return exitInternal, true
	case daemon != nil:
		return k.toDaemon(g, *daemon, files), true
	}
	return exitOK, false // the lock is held until the process ends
}

// gateReader sends a reader to the daemon that serves the target, if one
// does. It takes no lock: it never waits for a writer.
func (k *kernelOpts) gateReader(g *globals, files []string) (code int, done bool) {
	h, err := host.HolderOf(k.stateDir(g))
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

// takeLock takes the target's lock for me, waiting up to timeout for a
// one-shot holder; when a daemon holds it, it returns the daemon and
// waits for nothing.
func takeLock(g *globals, dir string, me host.Holder, timeout time.Duration) (*host.Lock, *host.Holder, error) {
	lk, h, err := host.TryLock(dir, me)
	switch {
	case err != nil || lk != nil:
		return lk, nil, err
	case h.Daemon():
		return nil, h, nil
	}
	g.log.WithField("holder", h.String()).Info("another netagent is changing the namespace; waiting for it")
	ctx, cancel := context.WithTimeoutCause(context.Background(), timeout,
		fmt.Errorf("gave up after --lock-timeout %v", timeout))
	defer cancel()
	lk, err = host.WaitLock(ctx, dir, me)
	if le := (*host.LockedError)(nil); errors.As(err, &le) && le.Holder.Daemon() {
		return nil, &le.Holder, nil // a daemon took it meanwhile
	}
	return lk, nil, err
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
