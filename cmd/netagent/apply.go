package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/versions"
	"github.com/netagent/netagent/internal/gctune"
	"github.com/netagent/netagent/internal/plural"
	"github.com/netagent/netagent/internal/termsafe"
)

func init() {
	register(&command{
		name:    "apply",
		summary: "converge once to the intent files and exit (no daemon needed)",
		usage:   "[--netns NAME] [--json] [--all-ops] [--wait D] [--wait-for-nics] [--resolv-conf PATH] [--lock-timeout D] [--via-daemon] [--if-version N] [--adopt] [--protect LINK]... [--force] FILE...",
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
	waitForNICsFlag(fs, &spec.WaitForNICs, "apply")
	resolvConfFlag(fs, k)
	vo := versionFlags(fs)
	k.gateFlags(fs, true, func(h host.Holder, files []string) int { return applyViaDaemon(g, spec.Wait, vo, h, files) })
	adoptFlag(fs, k, "")
	prot := protectFlags(fs, true)
	o, code, ok := k.parse(g, fs, args, prot)
	if !ok {
		return code
	}
	spec.Judged = func(gd *oneshot.Guarded) { printRefused(g, gd, "netagent: apply: ") }
	spec.Version = vo.spec("apply " + strings.Join(fs.Args(), " "))
	spec.Progress = progressFor(g)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := oneshot.Apply(ctx, o, fs.Args(), spec)
	if err != nil {
		return k.failed(g, err, fs.Args())
	}
	return printApplyResult(g, "apply", res)
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

// waitForNICsFlag adds --wait-for-nics to apply, try and rollback (verb).
func waitForNICsFlag(fs *flag.FlagSet, nics *bool, verb string) {
	fs.BoolVar(nics, "wait-for-nics", false, "wait (up to --wait) also for the physical NICs of the intent that do not exist on this host, "+
		"to be plugged in; by default the "+verb+" does not wait for a NIC nothing creates and says that it does not exist")
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
	printAppliedOps(g, res.Ops, res.Disruptions, res.Adoptions, g.allOps)
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
		fmt.Fprintf(g.stdout, "converged: %s%s\n", plural.N(len(res.Ops), "operation"), applyTally(res, took))
		return exitOK
	}
	for _, p := range res.Problems {
		fmt.Fprintf(g.stderr, "%s\n", termsafe.String(p.String()))
	}
	if len(res.Problems) == 0 && res.Err != nil {
		fmt.Fprintf(g.stderr, "%s\n", termsafe.String(res.Err.Error()))
	}
	if note := oneshot.MissingNICNote(res.Problems); note != "" {
		fmt.Fprintf(g.stderr, "%s\n", termsafe.String(note))
	}
	fmt.Fprintf(g.stdout, "not converged: %s failed or blocked (%s)%s\n", plural.N(len(res.Problems), "item"), plural.N(len(res.Ops), "operation"), applyTally(res, took))
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
	// name is the command, for the lock's holder ("apply" when unset).
	name string
	// resolvConf is --resolv-conf.
	resolvConf string
	// adopt is --adopt (adoptFlag).
	adopt bool
}

// kernelFlags adds --netns to a command's flags, defaulting to the global
// option.
func kernelFlags(g *globals, fs *flag.FlagSet) *kernelOpts {
	k := &kernelOpts{}
	fs.StringVar(&k.netns, "netns", g.netns, "named network namespace to act on (default: the global --netns, else the host's)")
	return k
}

// options are the oneshot options of the command.
func (k *kernelOpts) options(g *globals) *oneshot.Options {
	return &oneshot.Options{Netns: k.netns, StateDir: k.stateDir(g), Command: k.name, Write: k.write,
		LockTimeout: k.lockTimeout, ResolvConf: k.resolvConf, Log: g.log, Adopt: k.adopt}
}

// adoptFlag adds --adopt to apply, plan, try and run.
func adoptFlag(fs *flag.FlagSet, k *kernelOpts, what string) {
	fs.BoolVar(&k.adopt, "adopt", false, strings.TrimSpace(what+" take over the objects another tool made where the intent puts its own "+
		"(equal: only netagent's mark is written, nothing deleted; differing: changed as netagent's own); objects the intent does not name stay untouched"))
}

// resolvConfFlag adds --resolv-conf to a command that renders the intent
// (plan, check, apply, try, run).
func resolvConfFlag(fs *flag.FlagSet, k *kernelOpts) {
	fs.Func("resolv-conf", "write the DNS servers and search domains of the intent and the leases to `PATH` "+
		"(never over a file netagent did not write; handed to systemd-resolved when PATH is its stub; default: DNS is left alone)",
		func(v string) error {
			if !filepath.IsAbs(v) {
				return errors.New("must be an absolute path")
			}
			k.resolvConf = v
			return nil
		})
}

// gateFlags adds --via-daemon to apply, plan and check, and --lock-timeout
// to apply; serve is the command done through the daemon.
func (k *kernelOpts) gateFlags(fs *flag.FlagSet, write bool, serve func(h host.Holder, files []string) int) {
	k.write, k.daemon = write, serve
	fs.BoolVar(&k.viaDaemon, "via-daemon", false,
		"when a daemon serves the namespace, send the intent to its socket API (it becomes the API's document) instead of refusing")
	if write {
		fs.DurationVar(&k.lockTimeout, "lock-timeout", oneshot.DefaultLockTimeout,
			"how long to wait while another netagent apply changes the namespace")
	}
}

// daemonsOwn reports whether a reader (plan, check) may go without intent
// files: with --via-daemon, it then asks about the daemon's own intent.
func (k *kernelOpts) daemonsOwn() bool { return k.viaDaemon && !k.write && k.daemon != nil }

// parse parses the command line of a command that acts on the target
// with intent files (apply, plan, check, try) and returns its oneshot
// options, with the protection of prot (nil: none).
func (k *kernelOpts) parse(g *globals, fs *flag.FlagSet, args []string, prot *protectOpts) (*oneshot.Options, int, bool) {
	if code, ok := parseFlags(fs, args); !ok {
		return nil, code, false
	}
	if fs.NArg() == 0 && !k.daemonsOwn() {
		return nil, usageError(g, fs, "no intent file given"), false
	}
	if k.adopt && k.viaDaemon {
		return nil, usageError(g, fs, "--adopt is for the one-shot command: start the daemon with `run --adopt` instead of --via-daemon"), false
	}
	o := k.options(g)
	o.Sized = gctune.Size
	o.Recovered = func(r oneshot.Recovered) { printRecovered(g, r) }
	if prot != nil {
		o.Protect, o.Force = prot.links, prot.force
	}
	return o, exitOK, true
}

// prepare parses the command line and starts the command
// (oneshot.Start): the gate, the intent files loaded and the target
// opened with the intent rendered once. A nil target comes with the exit
// code to return.
func (k *kernelOpts) prepare(g *globals, fs *flag.FlagSet, args []string) (*oneshot.Target, int) {
	o, code, ok := k.parse(g, fs, args, nil)
	if !ok {
		return nil, code
	}
	t, err := oneshot.Start(context.Background(), o, fs.Args())
	if err != nil {
		return nil, k.failed(g, err, fs.Args())
	}
	return t, exitOK
}

// failed prints why a command failed and returns its exit code: a daemon
// serving the target does the command (--via-daemon, with the files) or
// refuses it (gate).
func (k *kernelOpts) failed(g *globals, err error, files []string) int {
	var de *oneshot.DaemonError
	switch {
	case errors.As(err, &de):
		return k.toDaemon(g, de.Holder, files)
	case errors.Is(err, oneshot.ErrNoIntent):
		fmt.Fprintf(g.stderr, "netagent: %v\n", err)
		return exitUsage
	}
	return printError(g, "", err)
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

// protectOpts are --protect and --force.
type protectOpts struct {
	links []string
	force bool
}

// protectFlags adds --protect (repeatable) and, for a command that
// changes the kernel or plans a change, --force.
func protectFlags(fs *flag.FlagSet, force bool) *protectOpts {
	p := &protectOpts{}
	fs.Func("protect", "a link no apply may delete, recreate, set down, strip of its addresses or withdraw the routes through (repeatable)",
		func(v string) error {
			if v == "" {
				return fmt.Errorf("empty link name")
			}
			p.links = append(p.links, v)
			return nil
		})
	if force {
		fs.BoolVar(&p.force, "force", false, "apply even what would disrupt a protected link, and delete the orphans an intent left out")
	}
	return p
}

// versionOpts are --if-version and --keep-versions.
type versionOpts struct {
	ifVersion int
	keep      int
}

// versionFlags adds --if-version and --keep-versions to a writer.
func versionFlags(fs *flag.FlagSet) *versionOpts {
	v := &versionOpts{ifVersion: versions.Any}
	fs.Func("if-version", "refuse (exit 5) unless the current version of the intent is N (0: none yet); see netagent history",
		func(s string) error {
			n, err := parseVersion(s)
			v.ifVersion = n
			return err
		})
	keepFlag(fs, &v.keep)
	return v
}

// keepFlag adds --keep-versions.
func keepFlag(fs *flag.FlagSet, keep *int) {
	*keep = versions.DefaultKeep
	fs.Func("keep-versions", fmt.Sprintf("how many versions of the intent to keep in the state directory (default %d)", versions.DefaultKeep),
		func(s string) error {
			n, err := parseVersion(s)
			if err == nil && n < 1 {
				err = errors.New("must be at least 1")
			}
			*keep = n
			return err
		})
}

// spec is the version a writer records from source.
func (v *versionOpts) spec(source string) *oneshot.VersionSpec {
	return &oneshot.VersionSpec{Source: source, IfVersion: v.ifVersion, Keep: v.keep}
}
