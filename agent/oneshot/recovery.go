package oneshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/internal/statefile"
)

// A trial that its process did not see through (killed, a crash, a reboot)
// stays pending on disk (host.PendingTrial). The next netagent that
// changes the namespace reverts it first: apply, try and the daemon under
// its lock (RecoverFirst), and `netagent recover` (Recover), which the
// systemd unit runs before the daemon starts (ExecStartPre). plan and
// check write nothing: they refuse, saying to run `netagent recover`.
//
// Damaged state files: a record of the state directory that is not whole
// (statefile.ErrDamaged: emptied, cut short, of another checksum) makes
// every command that needs it fail, naming it: what it held (a NIC's
// original MTU, a sysctl's original value) is not guessed. Recover names
// each one (Damaged) and stops (before it reverts a trial: a revert needs
// them too); one of a cache (a lease, chain records) it only names, as its
// readers do without it. With AcceptDamaged it sets them aside
// (SetAsideDamaged), as <name>.damaged-<time>, saying what each held, and
// the commands start those records anew.

// RecoverOptions are the options of Recover beyond the namespace's.
type RecoverOptions struct {
	// AcceptDamaged sets damaged records aside (SetAsideDamaged).
	AcceptDamaged bool
	// AcceptIncomplete reverts in part a trial whose journal does not
	// account for every record it wrote (host.RecoverAcceptIncomplete).
	AcceptIncomplete bool
}

// RecoverResult is what Recover did of one namespace.
type RecoverResult struct {
	// Damaged are the damaged records found (with AcceptDamaged: set
	// aside, SetAside).
	Damaged  []*statefile.DamagedError
	SetAside []SetAside
	// Stopped: a damaged record that is not a cache stays (no
	// AcceptDamaged); nothing was reverted.
	Stopped bool
	// Busy, when set, is the daemon that serves the namespace, met while
	// setting damaged records aside: it must be stopped first.
	Busy *host.Holder
	// Recovery is what the revert did (nil: no trial was pending).
	Recovery *host.Recovery
	// Daemon, when set, serves the namespace: it recovers its trials
	// itself.
	Daemon *host.Holder
	// Dropped: the namespace is gone, and with it what the trial (of
	// DroppedPID) changed: the trial was dropped, for this reason.
	Dropped    string
	DroppedPID int
}

// SetAside is a damaged record set aside: where to, and what it held.
type SetAside struct {
	Damaged *statefile.DamagedError
	To      string
	Lost    string
}

// Recover reports (with AcceptDamaged: sets aside) the damaged records of
// the namespace of o, then reverts its pending trial, if any.
func Recover(ctx context.Context, o *Options, ro RecoverOptions) (*RecoverResult, error) {
	res := &RecoverResult{}
	var err error
	if res.Damaged, err = Damaged(o.StateDir); err != nil {
		return res, err
	}
	if len(res.Damaged) > 0 && ro.AcceptDamaged {
		if res.SetAside, res.Busy, err = SetAsideDamaged(o); err != nil || res.Busy != nil {
			return res, err
		}
	} else if slices.ContainsFunc(res.Damaged, func(d *statefile.DamagedError) bool { return !statefile.IsCache(d.Path) }) {
		res.Stopped = true
		return res, nil
	}
	return res, recoverTrial(ctx, o, ro.AcceptIncomplete, res)
}

// RecoverTrial is Recover without the damaged records: it reverts the
// pending trial of o's namespace, if any (`netagent rollback` of a trial
// whose process died).
func RecoverTrial(ctx context.Context, o *Options) (*RecoverResult, error) {
	res := &RecoverResult{}
	return res, recoverTrial(ctx, o, false, res)
}

// Damaged is statefile.Scan of stateDir less the trial record: a damaged
// one is the trial's to report (host.DamagedTrialError), and set aside it
// would leave the trial's changes unreverted; `recover
// --accept-incomplete` reverts them from the journal instead.
func Damaged(stateDir string) ([]*statefile.DamagedError, error) {
	damaged, err := statefile.Scan(stateDir)
	return slices.DeleteFunc(damaged, func(d *statefile.DamagedError) bool { return host.IsTrialRecord(stateDir, d.Path) }), err
}

// SetAsideDamaged sets the damaged records of o's namespace aside, under
// its lock; daemon is set (and nothing done) when a daemon serves it.
func SetAsideDamaged(o *Options) (done []SetAside, daemon *host.Holder, err error) {
	lk, daemon, err := TakeLock(o, recoverer())
	if err != nil || daemon != nil {
		return nil, daemon, err
	}
	defer lk.Release()
	damaged, err := Damaged(o.StateDir) // again, under the lock
	if err != nil {
		return nil, nil, err
	}
	for _, d := range damaged {
		to, err := statefile.SetAside(d)
		if err != nil {
			return done, nil, err
		}
		lost := statefile.Describe(d.Path)
		if lost == "" {
			lost = "unknown"
		}
		done = append(done, SetAside{Damaged: d, To: to, Lost: lost})
	}
	return done, nil, nil
}

func recoverer() host.Holder {
	return host.Holder{PID: os.Getpid(), Command: "recover", Since: time.Now()}
}

// recoverTrial reverts the pending trial of o's namespace, if any, under
// its lock; accept: a journal that does not account for every record is
// reverted in part.
func recoverTrial(ctx context.Context, o *Options, accept bool, res *RecoverResult) error {
	t, err := host.PendingTrial(o.StateDir)
	switch {
	case accept && errors.Is(err, host.ErrDamagedTrial):
		t = &host.Trial{} // reverted from its journal alone
	case err != nil || t == nil:
		return err
	}
	lk, daemon, err := TakeLock(o, recoverer())
	if res.Daemon = daemon; err != nil || daemon != nil {
		return err
	}
	defer lk.Release()
	rt, err := host.Open(o.Netns, o.StateDir, o.log())
	if err != nil {
		// The namespace is gone, and with it what the trial changed.
		res.Dropped, res.DroppedPID = fmt.Sprintf("the namespace is gone (%v): nothing to revert", err), t.PID
		return host.DiscardTrial(o.StateDir, res.Dropped)
	}
	defer rt.Close()
	recoverFn := rt.Recover
	if accept {
		recoverFn = rt.RecoverAcceptIncomplete
	}
	res.Recovery, err = RecoverPending(ctx, rt, recoverFn)
	return err
}

// StateTarget is a namespace's state directory under a root (recover
// --all).
type StateTarget struct {
	Netns, StateDir string
}

// StateTargets lists the namespaces with a state directory under root:
// one directory per namespace, "host" for the host's.
func StateTargets(root string) ([]StateTarget, error) {
	dirs, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var out []StateTarget
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		netns := d.Name()
		if netns == "host" {
			netns = ""
		}
		out = append(out, StateTarget{Netns: netns, StateDir: filepath.Join(root, d.Name())})
	}
	return out, nil
}
