package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/versions"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/internal/plural"
	"github.com/netagent/netagent/internal/termsafe"
)

func init() {
	register(&command{
		name:    "rollback",
		summary: "apply an earlier version of the intent (default: the one before the current) as a new version",
		usage:   "[--netns NAME] [--json] [--if-version N] [--via-daemon] [--protect LINK]... [--force] [N]",
		run:     runRollback,
	})
}

// runRollback applies version N's intent, recorded as a new version
// "rollback N", under the target's lock as apply does. Through the daemon
// (--via-daemon), N takes the place of the daemon's documents until one of
// them changes (see agent/history.go). The protection of links judges the
// rollback as it does an apply, before the version is recorded: a refused
// rollback (exitRefused) records nothing and changes nothing.
func runRollback(g *globals, args []string) int {
	fs := newFlagSet(g, "rollback", "[N]")
	k := kernelFlags(g, fs)
	opts := host.ApplyOptions{Wait: oneshot.DefaultApplyWait}
	fs.DurationVar(&opts.Wait, "wait", oneshot.DefaultApplyWait, "how long to wait, while items are blocked, for the link events the rollback causes")
	waitForNICsFlag(fs, &opts.WaitForNICs, "rollback")
	vo := versionFlags(fs)
	n := 0
	k.gateFlags(fs, true, func(h host.Holder, _ []string) int { return rollbackViaDaemon(g, h, n, vo) })
	prot := protectFlags(fs, true)
	fs.BoolVar(&g.asJSON, "json", false, "print the operations run and the outcome as apply --json does (the new version on stderr)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if g.asJSON && k.viaDaemon {
		return usageError(g, fs, "--json is the one-shot rollback's: through the daemon, read status --json after it")
	}
	// A trial pending: rollback reverts it now (confirm.go).
	if code, handled := rollbackTrial(g, k); handled {
		return code
	}
	n, code := rollbackVersion(g, fs)
	if code != exitOK {
		return code
	}
	o := k.options(g)
	o.Protect, o.Force = prot.links, prot.force
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := oneshot.RollbackTo(ctx, o, oneshot.RollbackSpec{ApplyOptions: opts, Version: n, IfVersion: vo.ifVersion, Store: vo.store(g, k),
		Judged: func(gd *oneshot.Guarded) { printRefused(g, gd, "netagent: rollback: ") },
		Recorded: func(back int, cur versions.Meta) {
			w := g.stdout
			if g.asJSON {
				w = g.stderr // stdout is the JSON document
			}
			fmt.Fprintf(w, "rollback to version %d: now version %d\n", back, cur.Number)
		},
		Progress: progressFor(g)})
	if err != nil {
		return rollbackError(g, k, err)
	}
	return printApplyResult(g, "rollback", res)
}

// rollbackVersion is the version N rollback names (0: none, the one
// before the current).
func rollbackVersion(g *globals, fs *flag.FlagSet) (int, int) {
	switch {
	case fs.NArg() > 1:
		return 0, usageError(g, fs, "at most one version")
	case fs.NArg() == 1:
		v, err := parseVersion(fs.Arg(0))
		if err != nil || v == 0 {
			return 0, usageError(g, fs, fmt.Sprintf("%q: want a version number (see netagent history)", fs.Arg(0)))
		}
		return v, exitOK
	}
	return 0, exitOK
}

// rollbackError prints why a rollback failed before its apply and
// returns its exit code.
func rollbackError(g *globals, k *kernelOpts, err error) int {
	var inv *oneshot.InvalidError
	var de *oneshot.DaemonError
	switch {
	case errors.As(err, &inv) || errors.As(err, &de):
		return k.failed(g, err, nil)
	}
	return versionError(g, err)
}

// rollbackViaDaemon asks the daemon h to roll back to version n.
func rollbackViaDaemon(g *globals, h host.Holder, n int, vo *versionOpts) int {
	resp, outcome, err := oneshot.RollbackViaDaemon(h, n, vo.request)
	if err != nil {
		return daemonFail(g, err)
	}
	termsafe.Sanitize(resp)
	st := resp.Status
	fmt.Fprintf(g.stdout, "rolled back through the daemon %s: now version %d", h, st.Version)
	if st.Override != "" {
		fmt.Fprintf(g.stdout, " (%s)", st.Override)
	}
	fmt.Fprintln(g.stdout)
	if outcome != oneshot.Converged {
		daemonOps(g, resp)
		return exitFailed
	}
	fmt.Fprintf(g.stdout, "converged: %s\n", plural.N(len(resp.Operations), "operation"))
	return exitOK
}
