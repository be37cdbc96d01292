package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/oneshot"
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
		usage:   "[--timeout D] [--probe P]... [--keep-partial] [--confirm-when-probes-pass] [--if-version N] [--protect LINK]... [--force] FILE...",
		run:     runTry,
	})
}

// tryFlags adds try's flags to fs.
func tryFlags(g *globals, fs *flag.FlagSet, k *kernelOpts) (*oneshot.TryOptions, *versionOpts, *protectOpts) {
	o := &oneshot.TryOptions{Apply: host.ApplyOptions{Wait: oneshot.DefaultApplyWait}}
	fs.DurationVar(&o.Timeout, "timeout", trial.DefaultTimeout, "revert unless confirmed within this time")
	fs.DurationVar(&o.ProbeTimeout, "probe-timeout", trial.DefaultProbeTimeout, "how long the probes may take to pass after the apply (at most --timeout)")
	fs.Func("probe", "ping:HOST or tcp:HOST:PORT (see `go doc agent/probe`), run in the namespace after the apply: the trial reverts unless it passes (repeatable)",
		func(v string) error { o.Probes = append(o.Probes, v); return nil })
	fs.BoolVar(&o.KeepPartial, "keep-partial", false, "do not revert when items fail: wait for confirm or the timeout with what converged")
	fs.BoolVar(&o.AutoConfirm, "confirm-when-probes-pass", false, "confirm as soon as the apply verified and every probe passed (unattended)")
	fs.DurationVar(&o.Apply.Wait, "wait", oneshot.DefaultApplyWait, "how long to wait, while items are blocked, for the link events the apply causes")
	vo := versionFlags(fs)
	d := &daemonTrialOpts{}
	fs.StringVar(&d.name, "name", "", "with --via-daemon: the intent file that confirming writes in the daemon's intent directory (default trial-<version>.json)")
	fs.BoolVar(&d.detach, "detach", false, "with --via-daemon: return once the trial is applied; the daemon keeps its deadline")
	resolvConfFlag(fs, k)
	k.gateFlags(fs, true, tryViaDaemon(g, o, d, vo))
	return o, vo, protectFlags(fs, true)
}

func runTry(g *globals, args []string) int {
	fs := newFlagSet(g, "try", "FILE...")
	k := kernelFlags(g, fs)
	k.name = "try"
	o, vo, prot := tryFlags(g, fs, k)
	tg, code := k.prepare(g, fs, args)
	if tg == nil {
		return code
	}
	defer tg.Close()
	rt := tg.Runtime
	defer reportKillPoints(g)
	gd, code := prot.guard(g, tg)
	if gd == nil {
		return code
	}
	if prot.refuse(g, gd, "netagent: try: ") {
		return exitRefused
	}
	if code, ok := checkVersion(g, vo.store(g, k), vo.ifVersion); !ok {
		return code
	}
	t, code := newTrial(g, fs, k, rt, o)
	if t == nil {
		return code
	}
	t.Intended = gd.Apply
	// Confirming records the trial's intent as the new version.
	t.Record = func() error {
		_, _, err := vo.recorder(g, k).Record(versions.FilesSource("try", fs.Args()), tg.Intent.Files, vo.ifVersion)
		return err
	}
	t.Leases = func(ctx context.Context, res *host.Result) (*host.Result, error) {
		return oneshot.ApplyLeasesResult(ctx, rt, tg.Leases, gd, res, o.Apply)
	}
	return printTrial(g, runTrial(g, t))
}

// newTrial is the trial of try's files on rt, with its probes.
func newTrial(g *globals, fs *flag.FlagSet, k *kernelOpts, rt *host.Runtime, o *oneshot.TryOptions) (*oneshot.Trial, int) {
	files, code := readFiles(g, fs.Args())
	if files == nil {
		return nil, code
	}
	probes, err := trial.ParseProbes(o.Probes, rt.Target())
	if err != nil {
		return nil, usageError(g, fs, err.Error())
	}
	rt.SetAcquireTimeout(oneshot.AcquireTimeout(o.Apply.Wait))
	return &oneshot.Trial{RT: rt, Files: files, Probes: probes, Options: *o}, exitOK
}

// runTrial runs t until SIGINT or SIGTERM, showing it as it goes.
func runTrial(g *globals, t *oneshot.Trial) *oneshot.TryResult {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(stop)
	t.Stop = stop
	tty := isTerminal(os.Stdin) && isTerminal(os.Stderr)
	t.BeforeWait = func() (<-chan struct{}, error) { return terminalEnter(tty) }
	t.Report = func(e oneshot.TryEvent) { showTrial(g, e, tty) }
	return t.Run()
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

// readFiles reads the intent files again, for the trial's record.
func readFiles(g *globals, paths []string) (map[string][]byte, int) {
	files := make(map[string][]byte, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintf(g.stderr, "netagent: %v\n", err)
			return nil, exitInternal // I/O
		}
		files[p] = data
	}
	return files, exitOK
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// reportKillPoints tells the crash tests how many kill points the run
// passed (only with NETAGENT_TEST_KILL_AFTER set).
func reportKillPoints(g *globals) {
	if killpoint.Armed() {
		fmt.Fprintf(g.stderr, "test kill points passed: %d\n", host.KillPoints())
	}
}

// checkVersion refuses a trial whose --if-version is not the current
// version, before anything changes (confirming records the version, and
// checks again, under the same lock).
func checkVersion(g *globals, store versions.Store, want int) (int, bool) {
	if err := versions.Check(store, want); err != nil {
		return versionError(g, err), false
	}
	return exitOK, true
}
