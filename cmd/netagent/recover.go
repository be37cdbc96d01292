package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
)

// A trial that its process did not see through (killed, a crash, a reboot)
// stays pending on disk (host.PendingTrial). The next netagent that
// changes the target reverts it first and says so on stderr: apply, try
// and the daemon under the target's lock, and `netagent recover`, which
// the systemd unit runs before the daemon starts (ExecStartPre). plan and
// check write nothing: they refuse, saying to run `netagent recover`.

func init() {
	register(&command{
		name:    "recover",
		summary: "revert a trial left pending by a netagent that died (the unit runs it at boot)",
		usage:   "[--netns NAME] [--all] [--accept-damaged] [--accept-incomplete]",
		run:     runRecover,
	})
}

func runRecover(g *globals, args []string) int {
	fs := newFlagSet(g, "recover", "[--netns NAME] [--all] [--accept-damaged] [--accept-incomplete]")
	k := kernelFlags(g, fs)
	all := fs.Bool("all", false, "every target under the state directory's parent (one directory per namespace, \"host\" for the host's)")
	acceptIncomplete := fs.Bool("accept-incomplete", false, "when the trial journal does not account for every record the trial wrote (damaged, cut short, missing), "+
		"revert what it holds and drop the trial anyway: what the missing records held stays as the trial left it")
	timeout := fs.Duration("lock-timeout", oneshot.DefaultLockTimeout, "how long to wait while another netagent apply changes the namespace")
	acceptDamaged := fs.Bool("accept-damaged", false,
		"set aside damaged state files (as <name>.damaged-<time>), saying what each held; the commands that need them refuse until then")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(g, fs, "unexpected arguments")
	}
	if !*all {
		return recoverWithRecords(g, k.netns, k.stateDir(g), *timeout, *acceptDamaged, *acceptIncomplete)
	}
	root := filepath.Dir(k.stateDir(g))
	dirs, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(g.stderr, "netagent: recover: %v\n", err)
		return exitInternal
	}
	code := exitOK
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		netns := d.Name()
		if netns == "host" {
			netns = ""
		}
		if c := recoverWithRecords(g, netns, filepath.Join(root, d.Name()), *timeout, *acceptDamaged, *acceptIncomplete); c != exitOK {
			code = c
		}
	}
	return code
}

// recoverTarget reverts the pending trial of one target, if any.
func recoverTarget(g *globals, netns, stateDir string, timeout time.Duration) int {
	return recoverTargetAccept(g, netns, stateDir, timeout, false)
}

// recoverTargetAccept is recoverTarget; with accept, a journal that does
// not account for every record is reverted in part
// (RecoverAcceptIncomplete).
func recoverTargetAccept(g *globals, netns, stateDir string, timeout time.Duration, accept bool) int {
	t, err := host.PendingTrial(stateDir)
	switch {
	case accept && errors.Is(err, host.ErrDamagedTrial):
		t = &host.Trial{} // reverted from its journal alone
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: recover: %v\n", err)
		return exitInternal
	case t == nil:
		return exitOK
	}
	me := host.Holder{PID: os.Getpid(), Command: "recover", Since: time.Now()}
	lk, daemon, err := takeLock(g, stateDir, me, timeout)
	switch {
	case err != nil:
		fmt.Fprintf(g.stderr, "netagent: recover: %v\n", err)
		return exitInternal
	case daemon != nil:
		fmt.Fprintf(g.stderr, "netagent: recover: the daemon %s serves the namespace and recovers its trials itself\n", daemon)
		return exitOK
	}
	defer lk.Release()
	rt, err := host.Open(netns, stateDir, g.log)
	if err != nil {
		// The namespace is gone, and with it what the trial changed.
		reason := fmt.Sprintf("the namespace is gone (%v): nothing to revert", err)
		if err := host.DiscardTrial(stateDir, reason); err != nil {
			fmt.Fprintf(g.stderr, "netagent: recover: %v\n", err)
			return exitInternal
		}
		fmt.Fprintf(g.stderr, "netagent: dropped the pending trial of pid %d: %s\n", t.PID, reason)
		return exitOK
	}
	defer rt.Close()
	recoverFn := rt.Recover
	if accept {
		recoverFn = rt.RecoverAcceptIncomplete
	}
	_, code, _ := recoverPendingWith(g, rt, recoverFn)
	return code
}

// recoverPending reverts the pending trial, the caller holding the lock,
// and returns the recovery (nil when no trial was pending).
func recoverPending(g *globals, rt *host.Runtime) (*host.Recovery, int, bool) {
	return recoverPendingWith(g, rt, rt.Recover)
}

// recoverPendingWith runs a recovery (Recover, or RecoverAcceptIncomplete:
// oneshot.RecoverPending) and says what it did.
func recoverPendingWith(g *globals, rt *host.Runtime, recover func(context.Context) (*host.Recovery, error)) (*host.Recovery, int, bool) {
	rec, err := oneshot.RecoverPending(context.Background(), rt, recover)
	if err != nil {
		return rec, printError(g, "", err), false
	}
	if rec != nil {
		fmt.Fprintf(g.stderr, "netagent: %s\n", oneshot.RecoveryNote(rec))
	}
	return rec, exitOK, true
}
