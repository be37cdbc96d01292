package oneshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/internal/netnsx"
)

// One writer at a time: every command that changes a namespace (apply, the
// daemon) holds its lock (host.TryLock: an flock on <state dir>/lock,
// released by the kernel when the holder dies). A one-shot writer waits
// for a one-shot holder, up to Options.LockTimeout. When a daemon serves
// the namespace, apply, plan and check never act behind its back: Gate
// says so (Decision.Daemon), and the command refuses or goes through the
// daemon's socket API.

// Decision is what Gate decided.
type Decision struct {
	// Daemon, when set, is the daemon that serves the namespace: the
	// command must not act on it here. No lock is taken then.
	Daemon *host.Holder
	// Lock is the namespace's lock, taken for a writer (nil for a
	// reader, and with Daemon). It is held until released or the process
	// ends.
	Lock *host.Lock
	// Busy (a reader) is the one-shot writer changing the namespace now:
	// what the reader reads may change under it.
	Busy *host.Holder
}

// GoAhead reports whether the command may act on the namespace.
func (d Decision) GoAhead() bool { return d.Daemon == nil }

// Gate runs before the namespace is opened: a writer takes its lock
// (waiting for another one-shot writer up to o.LockTimeout); a reader
// takes none, and only learns who holds it.
func Gate(o *Options) (Decision, error) {
	if err := checkTarget(o); err != nil || !netnsx.Exists(o.Netns) {
		return Decision{}, err
	}
	if !o.Write {
		return gateReader(o)
	}
	me := host.Holder{PID: os.Getpid(), Command: o.command(), Since: time.Now()}
	lk, daemon, err := TakeLock(o, me)
	return Decision{Daemon: daemon, Lock: lk}, err
}

// checkTarget runs before the state directory is read or made: without
// the privilege nothing can be done (netnsx.ErrNeedsPrivilege). For a
// namespace that does not exist, Gate takes no lock and makes no state
// directory: the command reads its files (their errors first), then
// opening the namespace names it (netnsx.Open).
func checkTarget(o *Options) error {
	if err := netnsx.Check(o.Netns); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// gateReader finds the daemon that serves the namespace, if one does. It
// never waits for a writer.
func gateReader(o *Options) (Decision, error) {
	h, err := host.HolderOf(o.StateDir)
	switch {
	case err != nil:
		return Decision{}, err
	case h != nil && h.Daemon():
		return Decision{Daemon: h}, nil
	}
	return Decision{Busy: h}, nil
}

// FindDaemon finds the daemon a command talks to, the same way for every
// command (status, metrics, and apply, plan, check, try and rollback with
// --via-daemon through Gate): the one listening on socket when given
// (--socket), else the one that holds the lock of the namespace's state
// directory, whose lock file names its socket. No daemon is a
// *NoDaemonError.
func FindDaemon(netns, stateDir, socket string) (host.Holder, error) {
	if socket != "" {
		return host.Holder{Socket: socket}, nil
	}
	if err := netnsx.Check(netns); err != nil {
		return host.Holder{}, err
	}
	d, err := gateReader(&Options{Netns: netns, StateDir: stateDir})
	switch {
	case err != nil:
		return host.Holder{}, err
	case d.Daemon == nil:
		return host.Holder{}, &NoDaemonError{Netns: netns, StateDir: stateDir, Holder: d.Busy}
	}
	return *d.Daemon, nil
}

// TakeLock takes the lock of o.StateDir for me, waiting up to
// o.LockTimeout for a one-shot holder; when a daemon holds it, it returns
// the daemon and waits for nothing. The daemon (netagent run) takes its
// lock with it too.
func TakeLock(o *Options, me host.Holder) (*host.Lock, *host.Holder, error) {
	if err := netnsx.Check(o.Netns); err != nil { // before the state directory is made
		return nil, nil, err
	}
	lk, h, err := host.TryLock(o.StateDir, me)
	switch {
	case err != nil || lk != nil:
		return lk, nil, err
	case h.Daemon():
		return nil, h, nil
	}
	o.log().WithField("holder", h.String()).Info("another netagent is changing the namespace; waiting for it")
	ctx, cancel := context.WithTimeoutCause(context.Background(), o.LockTimeout,
		fmt.Errorf("gave up after --lock-timeout %v", o.LockTimeout))
	defer cancel()
	lk, err = host.WaitLock(ctx, o.StateDir, me)
	if le := (*host.LockedError)(nil); errors.As(err, &le) && le.Holder.Daemon() {
		return nil, &le.Holder, nil // a daemon took it meanwhile
	}
	return lk, nil, err
}
