package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
	"github.com/netagent/netagent/agent/probe"
	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/agent/versions"
	"github.com/netagent/netagent/internal/killpoint"
)

// Exit codes of try beyond the common ones: the trial was reverted, and
// why.
// (4, exitRefused: a protected link would be disrupted; 5, exitConflict:
// --if-version names another version; nothing changed in both.)
const (
	exitRevertedTimeout = 6 // not confirmed in time, or reverted on request (a signal, `netagent rollback`)
	exitRevertedFailed  = 7 // an item failed or stayed blocked
	exitRevertedVerify  = 8 // the read-back after the apply differs from the intent (the kernel did not keep a change)
	exitRevertedProbe   = 9 // a probe did not pass
)

func init() {
	register(&command{
		name:    "try",
		summary: "apply, then revert exactly unless confirmed (Enter, `netagent confirm`) before the timeout",
		usage:   "[--timeout D] [--probe P]... [--probe-must-pass-before] [--keep-partial] [--confirm-when-probes-pass] [--if-version N] [--adopt] [--protect LINK]... [--force] [--json] FILE...",
		run:     runTry,
	})
}

// tryFlags adds try's flags to fs.
func tryFlags(g *globals, fs *flag.FlagSet, k *kernelOpts) (*oneshot.TrySpec, *versionOpts, *protectOpts) {
	spec := &oneshot.TrySpec{TryOptions: oneshot.TryOptions{Apply: host.ApplyOptions{Wait: oneshot.DefaultApplyWait}}}
	o := &spec.TryOptions
	fs.DurationVar(&o.Timeout, "timeout", trial.DefaultTimeout, "revert unless confirmed within this time")
	fs.DurationVar(&o.ProbeTimeout, "probe-timeout", trial.DefaultProbeTimeout, "how long the probes may take to pass after the apply (at most --timeout)")
	fs.Func("probe", "a `PROBE`: ping:HOST, tcp:HOST:PORT, dns:NAME[@SERVER], http(s)://URL or arping:ADDR@DEV (see `go doc agent/probe`), run in the namespace before and after the apply: the trial reverts unless it passes, and when it fails again and again while the trial waits for its confirmation; one that fails before the change is reported and does not count (repeatable)",
		func(v string) error { o.Probes = append(o.Probes, v); return nil })
	fs.BoolVar(&o.KeepPartial, "keep-partial", false, "do not revert when items fail: wait for confirm or the timeout with what converged")
	fs.BoolVar(&o.ProbesMustPassBefore, "probe-must-pass-before", false, "refuse the trial, before any change, when a probe fails before it (exit 4)")
	fs.BoolVar(&o.AutoConfirm, "confirm-when-probes-pass", false, "confirm as soon as the apply verified and every probe passed (unattended)")
	fs.DurationVar(&o.Apply.Wait, "wait", oneshot.DefaultApplyWait, "how long to wait, while items are blocked, for the link events the apply causes")
	waitForNICsFlag(fs, &o.Apply.WaitForNICs, "try")
	vo := versionFlags(fs)
	d := &daemonTrialOpts{}
	fs.StringVar(&d.name, "name", "", "with --via-daemon: the intent file that confirming writes in the daemon's intent directory (default trial-<version>.json)")
	fs.BoolVar(&d.detach, "detach", false, "with --via-daemon: return once the trial is applied; the daemon keeps its deadline")
	resolvConfFlag(fs, k)
	k.gateFlags(fs, true, tryViaDaemon(g, o, d, vo))
	adoptFlag(fs, k, "")
	return spec, vo, protectFlags(fs, true)
}

func runTry(g *globals, args []string) int {
	fs := newFlagSet(g, "try", "FILE...")
	k := kernelFlags(g, fs)
	k.name = "try"
	spec, vo, prot := tryFlags(g, fs, k)
	fs.BoolVar(&g.asJSON, "json", false, "print how the trial ended as JSON (oneshot.TryDoc); what it prints as it goes is on stderr")
	o, code, ok := k.parse(g, fs, args, prot)
	if !ok {
		return code
	}
	out := g.stdout // --json: the document's; the text goes to stderr
	if g.asJSON {
		g.stdout = g.stderr
		defer func() { g.stdout = out }()
	}
	if _, err := probe.ParseAll(spec.Probes); err != nil {
		return usageError(g, fs, err.Error())
	}
	spec.Judged = func(gd *oneshot.Guarded) { printRefused(g, gd, "netagent: try: ") }
	spec.Check = func() error { return versions.Check(vo.store(g, k), vo.ifVersion) }
	// Confirming records the trial's intent as the new version.
	spec.Record = func(in *oneshot.Intent) error {
		_, err := oneshot.RecordVersion(o, *vo.spec(versions.FilesSource("try", fs.Args())), in.Files)
		return err
	}
	res, err := runTrial(g, o, fs.Args(), spec)
	switch {
	case errors.Is(err, versions.ErrConflict) || errors.Is(err, versions.ErrNotFound):
		return versionError(g, err)
	case err != nil:
		return k.failed(g, err, fs.Args())
	}
	defer reportKillPoints(g)
	if res.Refused {
		if len(res.FailingBefore) > 0 {
			fmt.Fprintf(g.stderr, "netagent: try: refused, nothing changed: %v\n", trial.Refusal(res.FailingBefore))
		}
		code = exitRefused
	} else {
		code = printTrial(g, res)
	}
	if g.asJSON {
		g.stdout = out
		if writeJSON(g, oneshot.TryDocOf(res)) != nil {
			return exitInternal
		}
	}
	return code
}

// runTrial runs the trial until SIGINT or SIGTERM (oneshot.Try), showing
// it as it goes.
func runTrial(g *globals, o *oneshot.Options, paths []string, spec *oneshot.TrySpec) (*oneshot.TryResult, error) {
	spec.Signals = func() (<-chan os.Signal, func()) {
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
		return stop, func() { signal.Stop(stop) }
	}
	tty := isTerminal(os.Stdin) && isTerminal(os.Stderr)
	spec.BeforeWait = func() (<-chan struct{}, error) { return terminalEnter(tty) }
	spec.Report = func(e oneshot.TryEvent) { showTrial(g, e, tty) }
	return oneshot.Try(context.Background(), o, paths, *spec)
}

// terminalEnter returns the channel of an Enter typed on the terminal
// from now on (nil without a terminal).
func terminalEnter(tty bool) (<-chan struct{}, error) {
	if !tty {
		return nil, nil
	}
	// An Enter typed before now came over the connection as it was
	// before the change: it proves nothing about the new one, so it
	// must not confirm. Drop what the terminal holds.
	if err := unix.IoctlSetInt(int(os.Stdin.Fd()), unix.TCFLSH, unix.TCIFLUSH); err != nil {
		return nil, fmt.Errorf("flushing the terminal's input: %w", err)
	}
	return readEnter(), nil
}

// readEnter returns the channel of an Enter typed on the terminal.
func readEnter() <-chan struct{} {
	enter := make(chan struct{}, 1)
	go func() {
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err == nil {
			enter <- struct{}{}
		}
	}()
	return enter
}

// showTrial prints a step of the trial.
func showTrial(g *globals, e oneshot.TryEvent, tty bool) {
	switch e := e.(type) {
	case oneshot.TryApplied:
		fmt.Fprintf(g.stdout, "applied: %d operations (journal: %d records)\n", e.Ops, e.Batches)
		if killpoint.Armed() {
			fmt.Fprintf(g.stderr, "test kill points after the apply: %d\n", host.KillPoints())
		}
	case oneshot.TryFailingBefore:
		fmt.Fprintf(g.stderr, "before any change: %v: it does not count\n", e.Failing)
	case oneshot.TryProbePassed:
		fmt.Fprintf(g.stderr, "probe %s passed\n", e.Probe)
	case oneshot.TryWaiting:
		fmt.Fprintf(g.stderr, "trial applied: confirm with `netagent confirm`%s before %s, or it reverts\n",
			map[bool]string{true: " or Enter", false: ""}[e.Enter], e.Deadline.Format(time.RFC3339))
	case oneshot.TryTick:
		if tty {
			fmt.Fprintf(g.stderr, "\rreverting in %3ds (Enter confirms) ", int(e.Left.Round(time.Second).Seconds()))
		}
	}
}

// printTrial prints how the trial ended and returns try's exit code.
func printTrial(g *globals, res *oneshot.TryResult) int {
	for _, p := range res.Problems {
		fmt.Fprintf(g.stderr, "%s\n", p)
	}
	code := exitOK
	if res.RecordErr != nil {
		code = versionError(g, res.RecordErr)
	}
	switch {
	case res.Revert == nil && res.Err != nil && !res.Confirmed:
		fmt.Fprintf(g.stderr, "netagent: try: %v\n", res.Err)
		return exitInternal
	case res.Confirmed && res.Err != nil:
		fmt.Fprintf(g.stderr, "\nnetagent: %v\n", res.Err)
		return exitInternal
	case res.Confirmed:
		fmt.Fprintf(g.stdout, "confirmed: %s\n", res.How)
		return exitOK
	}
	return printReverted(g, res, code)
}

// printReverted prints a trial's revert and returns try's exit code for
// it: code when the version could not be recorded, else its fault's.
func printReverted(g *globals, res *oneshot.TryResult, code int) int {
	if res.Err != nil {
		if res.Reverted != nil {
			for _, p := range res.Reverted.Problems {
				fmt.Fprintf(g.stderr, "%s\n", p)
			}
		}
		fmt.Fprintf(g.stderr, "\nnetagent: %v\n", res.Err)
		return exitInternal
	}
	fmt.Fprintf(g.stderr, "\nreverted: %s (%d operations)\n", res.Revert.Reason, len(res.Reverted.Ops))
	if res.RecordErr != nil {
		return code
	}
	return faultCode(res.Revert.Fault)
}

// faultCode is try's exit code for a revert of fault f.
func faultCode(f trial.Fault) int {
	switch f {
	case trial.Failed:
		return exitRevertedFailed
	case trial.Unkept:
		return exitRevertedVerify
	case trial.Probe:
		return exitRevertedProbe
	case trial.Internal:
		return exitInternal
	}
	return exitRevertedTimeout
}

// reportKillPoints tells the crash tests how many kill points the run
// passed (only with NETAGENT_TEST_KILL_AFTER set).
func reportKillPoints(g *globals) {
	if killpoint.Armed() {
		fmt.Fprintf(g.stderr, "test kill points passed: %d\n", host.KillPoints())
	}
}
