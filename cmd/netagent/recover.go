package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/internal/statefile"
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
		usage:   "[--netns NAME] [--all] [--accept-damaged] [--accept-incomplete] [--json]",
		run:     runRecover,
	})
}

func runRecover(g *globals, args []string) int {
	fs := newFlagSet(g, "recover", "[--netns NAME] [--all] [--accept-damaged] [--accept-incomplete] [--json]")
	k := kernelFlags(g, fs)
	all := fs.Bool("all", false, "every target under the state directory's parent (one directory per namespace, \"host\" for the host's)")
	var ro oneshot.RecoverOptions
	fs.BoolVar(&ro.AcceptIncomplete, "accept-incomplete", false, "when the trial journal does not account for every record the trial wrote (damaged, cut short, missing), "+
		"revert what it holds and drop the trial anyway: what the missing records held stays as the trial left it")
	fs.DurationVar(&k.lockTimeout, "lock-timeout", oneshot.DefaultLockTimeout, "how long to wait while another netagent apply changes the namespace")
	fs.BoolVar(&ro.AcceptDamaged, "accept-damaged", false,
		"set aside damaged state files (as <name>.damaged-<time>), saying what each held; the commands that need them refuse until then")
	fs.BoolVar(&g.asJSON, "json", false, "print what was recovered as JSON: an object (oneshot.RecoverDoc), with --all a list of them")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(g, fs, "unexpected arguments")
	}
	var docs []oneshot.RecoverDoc // --json
	if !*all {
		code := recoverTarget(g, k.options(g), ro, &docs)
		return printRecoverJSON(g, docs, false, code)
	}
	targets, err := oneshot.StateTargets(filepath.Dir(k.stateDir(g)))
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: recover: %v\n", err)
		return exitInternal
	}
	code := exitOK
	docs = []oneshot.RecoverDoc{}
	for _, t := range targets {
		o := k.options(g)
		o.Netns, o.StateDir = t.Netns, t.StateDir
		if c := recoverTarget(g, o, ro, &docs); c != exitOK {
			code = c
		}
	}
	return printRecoverJSON(g, docs, true, code)
}

// printRecoverJSON prints, with --json, the recoveries' documents: a list
// with --all (list), else the one; it returns code, recover's exit code.
func printRecoverJSON(g *globals, docs []oneshot.RecoverDoc, list bool, code int) int {
	if !g.asJSON {
		return code
	}
	var v any = docs
	if !list {
		v = docs[0]
	}
	if writeJSON(g, v) != nil {
		return exitInternal
	}
	return code
}

// recoverTarget recovers one namespace (oneshot.Recover) and says what it
// did on stderr; with --json its document is added to docs.
func recoverTarget(g *globals, o *oneshot.Options, ro oneshot.RecoverOptions, docs *[]oneshot.RecoverDoc) int {
	res, err := oneshot.Recover(context.Background(), o, ro)
	if g.asJSON {
		*docs = append(*docs, oneshot.RecoverDocOf(o, res, err))
	}
	return printRecover(g, res, err, ro.AcceptDamaged)
}

// printRecover says what a recovery did and returns recover's exit code.
func printRecover(g *globals, res *oneshot.RecoverResult, err error, accepted bool) int {
	if !accepted {
		printDamaged(g, res.Damaged)
	}
	for _, d := range res.SetAside {
		fmt.Fprintf(g.stderr, "netagent: set aside the damaged %s (%s) as %s; lost: %s\n", d.Damaged.Path, d.Damaged.Reason, d.To, d.Lost)
	}
	switch {
	case err != nil:
		return printError(g, "recover: ", err)
	case res.Busy != nil:
		fmt.Fprintf(g.stderr, "netagent: recover: the daemon %s serves the namespace: stop it, then run recover --accept-damaged\n", res.Busy)
		return exitInternal
	case res.Stopped:
		return exitFailed
	case res.Daemon != nil:
		fmt.Fprintf(g.stderr, "netagent: recover: the daemon %s serves the namespace and recovers its trials itself\n", res.Daemon)
	case res.Dropped != "":
		fmt.Fprintf(g.stderr, "netagent: dropped the pending trial of pid %d: %s\n", res.DroppedPID, res.Dropped)
	case res.Recovery != nil:
		fmt.Fprintf(g.stderr, "netagent: %s\n", oneshot.RecoveryNote(res.Recovery))
	}
	return exitOK
}

// printDamaged names the damaged records found: a cache as a warning (it
// is learnt again without it).
func printDamaged(g *globals, damaged []*statefile.DamagedError) {
	for _, d := range damaged {
		if statefile.IsCache(d.Path) {
			fmt.Fprintf(g.stderr, "netagent: recover: warning (a cache, learnt again without it): %v\n", d)
			continue
		}
		fmt.Fprintf(g.stderr, "netagent: recover: %v\n", d)
	}
}
