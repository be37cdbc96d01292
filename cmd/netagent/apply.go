package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/termsafe"
)

func init() {
	register(&command{
		name:    "apply",
		summary: "converge once to the intent files and exit (no daemon needed)",
		usage:   "[--netns NAME] [--json] [--all-ops] [--wait D] [--resolv-conf PATH] [--lock-timeout D] [--via-daemon] [--if-version N] [--protect LINK]... [--force] FILE...",
		run:     runApply,
	})
}

func runApply(g *globals, args []string) int {
	fs := newFlagSet(g, "apply", "FILE...")
	k := kernelFlags(g, fs)
	spec := oneshot.ApplySpec{ApplyOptions: host.ApplyOptions{Wait: oneshot.DefaultApplyWait}}
	fs.BoolVar(&g.asJSON, "json", false, "print the operations run and the outcome as JSON (see the README's JSON shapes)")
	fs.BoolVar(&g.allOps, "all-ops", false, fmt.Sprintf("print every operation run (default: the first %d, then how many more)", opsShown))
	waitFlag(fs, &spec.Wait)
	resolvConfFlag(fs, k)
	vo := versionFlags(fs)
	k.gateFlags(fs, true, applyViaDaemon(g, &spec.Wait, vo))
	prot := protectFlags(fs, true)
	o, code, ok := k.parse(g, fs, args, prot)
	if !ok {
		return code
	}
	spec.Judged = func(gd *oneshot.Guarded) { printRefused(g, gd, "netagent: apply: ") }
	spec.Record = recordVersion(g, k, vo, "apply "+strings.Join(fs.Args(), " "))
	spec.Progress = progressFor(g)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := oneshot.Apply(ctx, o, fs.Args(), spec)
	if err != nil {
		return k.failed(g, err, fs.Args())
	}
	return printApplyResult(g, "apply", res)
}

// recordVersion records the intent as a new version (and checks
// --if-version) once the protection let the apply through, under the
// namespace's lock, before the kernel changes.
func recordVersion(g *globals, k *kernelOpts, vo *versionOpts, source string) func(*oneshot.Intent) error {
	return func(in *oneshot.Intent) error {
		if code, ok := vo.record(g, k, source, in.Files); !ok {
			return exitError{code}
		}
		return nil
	}
}

// waitFlag adds apply's --wait.
func waitFlag(fs *flag.FlagSet, wait *time.Duration) {
	fs.Func("wait", fmt.Sprintf("how long to wait, while items are blocked, for the link events the apply causes "+
		"(a carrier coming up); 0: do not wait (default %v)", oneshot.DefaultApplyWait), func(v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && d < 0 {
			err = errors.New("must not be negative")
		}
		*wait = d
		return err
	})
}

// applyGuarded applies what the protection of links let through (gd),
// until SIGINT or SIGTERM (oneshot.ApplyGuarded), and reports: the end of
// apply and of rollback, named by verb.
func applyGuarded(g *globals, verb string, rt *host.Runtime, gd *oneshot.Guarded, lf *oneshot.Leases,
	intended *dg.Graph, opts host.ApplyOptions) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := oneshot.ApplyGuarded(ctx, rt, gd, lf, intended, opts, progressFor(g))
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %s: %v\n", verb, err)
		return exitInternal
	}
	return printApplyResult(g, verb, res)
}

// printApplyResult prints the outcome of an apply (or a rollback, verb)
// and returns its exit code: a refused one changed nothing.
func printApplyResult(g *globals, verb string, res *oneshot.Applied) int {
	if res.Outcome() == oneshot.Refused {
		return exitRefused
	}
	if res.RememberErr != nil {
		fmt.Fprintf(g.stderr, "netagent: %s: %v\n", verb, res.RememberErr)
	}
	return printApplied(g, res)
}

// printApplied prints an apply's outcome, as text or JSON (--json).
func printApplied(g *globals, res *oneshot.Applied) int {
	if g.asJSON {
		return reportApplyJSONLeases(g, res.Applied, res.Took, res.Leases, orphansJSON(res.Guarded))
	}
	orphanLines(g, res.Guarded, "")
	printAppliedOps(g, res.Ops, res.Disruptions, g.allOps)
	for _, l := range res.Leases {
		fmt.Fprintln(g.stdout, termsafe.String(fmt.Sprint(l)))
	}
	return reportApplyTook(g, &res.Result, res.Took)
}

// reportApply prints the outcome of an apply: a summary on stdout, and
// each item that did not converge, with why, on stderr.
func reportApply(g *globals, res *host.Result) int { return reportApplyTook(g, res, -1) }

// reportApplyTook is reportApply with how long the apply took (< 0:
// unknown) in the summary.
func reportApplyTook(g *globals, res *host.Result, took time.Duration) int {
	if res.Converged() {
		fmt.Fprintf(g.stdout, "converged: %d operations%s\n", len(res.Ops), applyTally(res, took))
		return exitOK
	}
	for _, p := range res.Problems {
		fmt.Fprintf(g.stderr, "%s\n", termsafe.String(p.String()))
	}
	if len(res.Problems) == 0 && res.Err != nil {
		fmt.Fprintf(g.stderr, "%s\n", termsafe.String(res.Err.Error()))
	}
	fmt.Fprintf(g.stdout, "not converged: %d items failed or blocked (%d operations)%s\n", len(res.Problems), len(res.Ops), applyTally(res, took))
	return exitFailed
}
