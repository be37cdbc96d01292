package main

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/internal/statefile"
)

// Damaged state files. A record of the state directory that is not whole
// (statefile.ErrDamaged: emptied, cut short, of another checksum) makes
// every command that needs it fail, naming it: what it held (a NIC's
// original MTU, a sysctl's original value) is not guessed. `recover`
// names each one and fails (before it reverts a trial: a revert needs
// them too); one of a cache (a lease, chain records) it only names, as
// its readers do without it. `recover --accept-damaged` sets them aside,
// as <name>.damaged-<time>, saying what each held, and the commands start
// those records anew.

// reportDamaged names the damaged records of the target in stateDir, on
// stderr. With accept, under the target's lock, it sets them aside. ok is
// false when a damaged record stays (or the scan failed): code is then
// the exit code.
func reportDamaged(g *globals, stateDir string, accept bool, timeout time.Duration) (code int, ok bool) {
	damaged, err := scanDamaged(stateDir)
	switch {
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: recover: %v\n", err)
		return exitInternal, false
	case len(damaged) == 0:
		return exitOK, true
	case !accept:
		code, ok = exitOK, true
		for _, d := range damaged {
			if statefile.IsCache(d.Path) {
				fmt.Fprintf(g.stderr, "netagent: recover: warning (a cache, learnt again without it): %v\n", d)
				continue
			}
			fmt.Fprintf(g.stderr, "netagent: recover: %v\n", d)
			code, ok = exitFailed, false
		}
		return code, ok
	}
	me := host.Holder{PID: os.Getpid(), Command: "recover", Since: time.Now()}
	lk, daemon, err := takeLock(g, stateDir, me, timeout)
	switch {
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: recover: %v\n", err)
		return exitInternal, false
	case daemon != nil:
		fmt.Fprintf(g.stderr, "netagent: recover: the daemon %s serves the namespace: stop it, then run recover --accept-damaged\n", daemon)
		return exitInternal, false
	}
	defer lk.Release()
	if damaged, err = scanDamaged(stateDir); err != nil { // again, under the lock
		fmt.Fprintf(g.stderr, "netagent: recover: %v\n", err)
		return exitInternal, false
	}
	for _, d := range damaged {
		to, err := statefile.SetAside(d)
		if err != nil {
			fmt.Fprintf(g.stderr, "netagent: recover: %v\n", err)
			return exitInternal, false
		}
		lost := statefile.Describe(d.Path)
		if lost == "" {
			lost = "unknown"
		}
		fmt.Fprintf(g.stderr, "netagent: set aside the damaged %s (%s) as %s; lost: %s\n", d.Path, d.Reason, to, lost)
	}
	return exitOK, true
}

// scanDamaged is statefile.Scan less the trial record: a damaged one is
// the trial's to report (host.DamagedTrialError), and set aside it
// would leave the trial's changes unreverted; `recover
// --accept-incomplete` reverts them from the journal instead.
func scanDamaged(stateDir string) ([]*statefile.DamagedError, error) {
	damaged, err := statefile.Scan(stateDir)
	return slices.DeleteFunc(damaged, func(d *statefile.DamagedError) bool { return host.IsTrialRecord(stateDir, d.Path) }), err
}

// recoverWithRecords reports (accept: sets aside) the damaged state files
// of one target, then reverts its pending trial, if any (recoverTarget).
func recoverWithRecords(g *globals, netns, stateDir string, timeout time.Duration, acceptDamaged, acceptIncomplete bool) int {
	if code, ok := reportDamaged(g, stateDir, acceptDamaged, timeout); !ok {
		return code
	}
	return recoverTargetAccept(g, netns, stateDir, timeout, acceptIncomplete)
}
