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
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
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

// defaultApplyWait is apply's --wait: long enough for a NIC's carrier to
// come up after the apply set it up.
const defaultApplyWait = 10 * time.Second

func runApply(g *globals, args []string) int {
	fs := newFlagSet(g, "apply", "FILE...")
	k := kernelFlags(g, fs)
	opts := host.ApplyOptions{Wait: defaultApplyWait}
	fs.BoolVar(&g.asJSON, "json", false, "print the operations run and the outcome as JSON (see the README's JSON shapes)")
	fs.BoolVar(&g.allOps, "all-ops", false, fmt.Sprintf("print every operation run (default: the first %d, then how many more)", opsShown))
	fs.Func("wait", fmt.Sprintf("how long to wait, while items are blocked, for the link events the apply causes "+
		"(a carrier coming up); 0: do not wait (default %v)", defaultApplyWait), func(v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && d < 0 {
			err = errors.New("must not be negative")
		}
		opts.Wait = d
		return err
	})
	resolvConfFlag(fs, k)
	vo := versionFlags(fs)
	k.gateFlags(fs, true, applyViaDaemon(g, &opts.Wait, vo))
	prot := protectFlags(fs, true)
	intended, rt, code := k.prepare(g, fs, args)
	if rt == nil {
		return code
	}
	defer rt.Close()
	g.leases = k.leases
	rt.SetAcquireTimeout(acquireTimeout(opts.Wait))
	gd, code := prot.guard(g, k, rt, intended)
	if gd == nil {
		return code
	}
	if prot.refuse(g, gd, "netagent: apply: ") {
		return exitRefused
	}
	// The judgement first: a refused change is no version. The version
	// (and --if-version) then, under the namespace's lock, before the
	// kernel changes.
	if code, ok := vo.record(g, k, "apply "+strings.Join(fs.Args(), " "), k.files); !ok {
		return code
	}
	k.files = nil // recorded: the parsed intent (15 MB at 100k routes) need not outlive the apply's start
	return applyGuarded(g, "apply", rt, gd, prot, intended, opts)
}

// acquireTimeout bounds each DISCOVER of a one-shot command: its --wait,
// the default wait with --wait 0.
func acquireTimeout(wait time.Duration) time.Duration {
	if wait <= 0 {
		return defaultApplyWait
	}
	return wait
}

// withKeptLeases renders the intent again with the DHCPv4 leases the state
// directory keeps, when some interface has dhcp4 (else lf is nil and
// intended stays): a later apply keeps the lease's address and routes
// intended while the lease item asks the server for it again, and check
// and plan compare with them.
func withKeptLeases(g *globals, rt *host.Runtime, files map[string]*intent.Intent, intended *dg.Graph,
	host func() (render.Facts, error)) (*leaseFacts, *dg.Graph, int) {
	lf := newLeaseFacts(files, host)
	if lf == nil {
		return nil, intended, exitOK
	}
	next, err := lf.kept(rt.StateDir())
	if err != nil {
		printIntentErrors(g, err)
		return nil, nil, exitFailed
	}
	return lf, next, exitOK
}

// applyGuarded applies what the protection of links let through (gd),
// until SIGINT or SIGTERM, remembers the protected links of the intent
// and reports: the end of apply and of rollback, named by verb.
func applyGuarded(g *globals, verb string, rt *host.Runtime, gd *guarded, prot *protectOpts,
	intended *dg.Graph, opts host.ApplyOptions) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	endProgress := startProgress(g, rt, intended)
	res, err := rt.ApplyPredicted(ctx, gd.apply, opts)
	if err == nil {
		res, err = applyLeasesPredicted(ctx, rt, g.leases, gd, prot.force, res, opts)
	}
	endProgress()
	took := time.Since(start)
	if err != nil {
		fmt.Fprintf(g.stderr, "netagent: %s: %v\n", verb, err)
		return exitInternal
	}
	if err := rt.Remember(gd.prot, host.Declares(intended), res.Current, prot.force); err != nil {
		fmt.Fprintf(g.stderr, "netagent: %s: %v\n", verb, err)
	}
	leases := leaseReport(g.leases, rt, &res.Result)
	if g.asJSON {
		return reportApplyJSONLeases(g, res, took, leases, prot.orphansJSON(gd))
	}
	prot.orphanLines(g, gd, "")
	printAppliedOps(g, res.Ops, res.Disruptions, g.allOps)
	for _, l := range leases {
		fmt.Fprintln(g.stdout, termsafe.String(fmt.Sprint(l)))
	}
	return reportApplyTook(g, &res.Result, took)
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
	// files are the intent files prepare loaded, by path, parsed.
	files map[string]*intent.Intent
	// protected are the links the intent files mark "protected": true
	// (prepare fills it).
	protected []string
	// drift are the items' drift policies, other than repair (prepare
	// fills it): check lists a report item's difference as such and
	// leaves an ignore item's out.
	drift render.DriftPolicies
	// leases renders the files with DHCPv4 leases (dhcp4.go); nil
	// without dhcp4 (prepare fills it).
	leases *leaseFacts
	// name is the command, for the lock's holder ("apply" when unset).
	name string
	// resolvConf is --resolv-conf (hostfacts.go).
	resolvConf string
}

// command names the command in the lock's holder.
func (k *kernelOpts) command() string {
	if k.name == "" {
		return "apply"
	}
	return k.name
}

// kernelFlags adds --netns to a command's flags, defaulting to the global
// option.
func kernelFlags(g *globals, fs *flag.FlagSet) *kernelOpts {
	k := &kernelOpts{}
	fs.StringVar(&k.netns, "netns", g.netns, "named network namespace to act on (default: the global --netns, else the host's)")
	return k
}

// prepare parses the command line, makes sure that no daemon serves the
// target (or sends the command to it: see gate), takes the target's lock
// for a writer, validates and renders the intent files it names and opens
// the target namespace: the start that plan, apply and check share.
// A nil runtime comes with the exit code to return.
func (k *kernelOpts) prepare(g *globals, fs *flag.FlagSet, args []string) (*dg.Graph, *host.Runtime, int) {
	if code, ok := parseFlags(fs, args); !ok {
		return nil, nil, code
	}
	if fs.NArg() == 0 && !k.daemonsOwn() {
		return nil, nil, usageError(g, fs, "no intent file given")
	}
	if code, done := k.gate(g, fs.Args()); done {
		return nil, nil, code // the daemon validates the files with its own
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(g.stderr, "netagent: no intent file given, and no daemon serves the namespace to compare with its own intent\n")
		return nil, nil, exitUsage
	}
	intended, files, code := loadIntentFiles(g, fs.Args())
	if intended == nil {
		return nil, nil, code
	}
	k.protected = render.ProtectedLinks(files)
	k.drift, _ = render.DriftOf(files) // rendered above: no error
	k.warnDNS(g, files)
	rt, code := k.open(g)
	if rt == nil {
		return nil, nil, code
	}
	k.files = files
	if code, ok := k.recoverFirst(g, rt); !ok {
		rt.Close()
		return nil, nil, code
	}
	if k.needsFacts(files) {
		var err error
		if intended, err = k.renderWithFacts(rt, files); err != nil {
			printIntentErrors(g, err)
			rt.Close()
			return nil, nil, exitFailed
		}
	}
	k.leases, intended, code = withKeptLeases(g, rt, files, intended, k.hostFacts(rt, files))
	if intended == nil {
		rt.Close()
		return nil, nil, code
	}
	k.leases.trustFresh(rt, time.Now()) // before T1: no server is asked
	return intended, rt, exitOK
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
