package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/agent/versions"
	dg "github.com/netagent/netagent/depgraph"
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

// tryOpts are the options of try.
type tryOpts struct {
	timeout      time.Duration
	probeTimeout time.Duration
	probes       []string
	keepPartial  bool
	autoConfirm  bool
	apply        host.ApplyOptions
}

func runTry(g *globals, args []string) int {
	fs := newFlagSet(g, "try", "FILE...")
	k := kernelFlags(g, fs)
	k.name = "try"
	o := &tryOpts{apply: host.ApplyOptions{Wait: defaultApplyWait}}
	fs.DurationVar(&o.timeout, "timeout", 60*time.Second, "revert unless confirmed within this time")
	fs.DurationVar(&o.probeTimeout, "probe-timeout", 10*time.Second, "how long the probes may take to pass after the apply (at most --timeout)")
	fs.Func("probe", "ping:HOST or tcp:HOST:PORT (see `go doc agent/probe`), run in the namespace after the apply: the trial reverts unless it passes (repeatable)",
		func(v string) error { o.probes = append(o.probes, v); return nil })
	fs.BoolVar(&o.keepPartial, "keep-partial", false, "do not revert when items fail: wait for confirm or the timeout with what converged")
	fs.BoolVar(&o.autoConfirm, "confirm-when-probes-pass", false, "confirm as soon as the apply verified and every probe passed (unattended)")
	fs.DurationVar(&o.apply.Wait, "wait", defaultApplyWait, "how long to wait, while items are blocked, for the link events the apply causes")
	vo := versionFlags(fs)
	d := &daemonTrialOpts{}
	fs.StringVar(&d.name, "name", "", "with --via-daemon: the intent file that confirming writes in the daemon's intent directory (default trial-<version>.json)")
	fs.BoolVar(&d.detach, "detach", false, "with --via-daemon: return once the trial is applied; the daemon keeps its deadline")
	resolvConfFlag(fs, k)
	k.gateFlags(fs, true, tryViaDaemon(g, o, d, vo))
	prot := protectFlags(fs, true)
	intended, rt, code := k.prepare(g, fs, args)
	if rt == nil {
		return code
	}
	defer rt.Close()
	defer reportKillPoints(g)
	gd, code := prot.guard(g, k, rt, intended)
	if gd == nil {
		return code
	}
	if prot.refuse(g, gd, "netagent: try: ") {
		return exitRefused
	}
	if code, ok := checkVersion(g, vo.store(g, k), vo.ifVersion); !ok {
		return code
	}
	files, code := readFiles(g, fs.Args())
	if files == nil {
		return code
	}
	probes, err := trial.ParseProbes(o.probes, rt.Target())
	if err != nil {
		return usageError(g, fs, err.Error())
	}
	// Confirming records the trial's intent as the new version.
	record := func() (int, bool) { return vo.record(g, k, versions.FilesSource("try", fs.Args()), k.files) }
	rt.SetAcquireTimeout(acquireTimeout(o.apply.Wait))
	again := func(ctx context.Context, res *host.Result) (*host.Result, error) {
		return applyLeases(ctx, rt, k.leases, gd, prot.force, res, o.apply)
	}
	return (&tryRun{g: g, o: o, rt: rt, intended: gd.apply, probes: probes, record: record, leases: again}).run(files)
}

// trial is one `netagent try`.
type tryRun struct {
	g        *globals
	o        *tryOpts
	rt       *host.Runtime
	intended *dg.Graph
	probes   []host.Prober
	// record records the trial's intent as the new version, on confirm.
	record func() (int, bool)
	// leases applies the intent again with the DHCPv4 leases the apply
	// acquired (applyLeases).
	leases func(context.Context, *host.Result) (*host.Result, error)
	tr     *host.TrialRun
	// stop is closed by SIGINT/SIGTERM.
	stop chan os.Signal
}

func (t *tryRun) run(files map[string][]byte) int {
	t.stop = make(chan os.Signal, 1)
	signal.Notify(t.stop, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(t.stop)
	now := time.Now()
	tr, err := t.rt.BeginTrial(host.Trial{Started: now, Deadline: now.Add(t.o.timeout), Files: files, Probes: t.o.probes})
	if err != nil {
		fmt.Fprintf(t.g.stderr, "netagent: try: %v\n", err)
		return exitInternal
	}
	t.tr = tr
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var interrupted atomic.Bool
	go func() {
		select {
		case <-t.stop:
			interrupted.Store(true)
			cancel() // the apply stops; the revert below puts back what it did
		case <-ctx.Done():
		}
	}()
	res, err := t.rt.Apply(ctx, t.intended, t.o.apply)
	if err == nil && t.leases != nil {
		res, err = t.leases(ctx, res)
	}
	cancel()
	switch {
	case err != nil:
		return t.revert(exitInternal, fmt.Sprintf("the apply failed: %v", err))
	case interrupted.Load():
		return t.revert(exitRevertedTimeout, "interrupted by a signal during the apply")
	}
	if _, rev := trial.Judge(trial.FromApply(res), t.o.keepPartial); rev != nil {
		// An unkept change is the apply's own read-back: a difference
		// from the intent, not a failed item (--keep-partial keeps
		// failed items only).
		for _, p := range res.Problems {
			fmt.Fprintf(t.g.stderr, "%s\n", p)
		}
		return t.revert(faultCode(rev.Fault), rev.Reason)
	}
	fmt.Fprintf(t.g.stdout, "applied: %d operations (journal: %d records)\n", len(res.Ops), tr.Batches())
	if killpoint.Armed() {
		fmt.Fprintf(t.g.stderr, "test kill points after the apply: %d\n", host.KillPoints())
	}
	// A converged apply is verified: it read the kernel back after every
	// change and found what its last pass left, or nothing to do, and
	// every item it compares equal to the intent (host.Converge); a difference there
	// (a change the kernel did not keep) reverted above. Reading back once
	// more would cost as much as that pass (half a second at 100k routes).
	if code, reverted := t.probe(); reverted {
		return code
	}
	if t.o.autoConfirm {
		return t.confirm("the apply verified and every probe passed")
	}
	return t.wait()
}

// probe runs the probes until each passed once, for --probe-timeout at
// most (and never past the trial's deadline).
func (t *tryRun) probe() (int, bool) {
	if len(t.probes) == 0 {
		return exitOK, false
	}
	end := trial.Window(time.Now(), t.o.probeTimeout, t.tr.Trial.Deadline)
	ctx, cancel := context.WithDeadline(context.Background(), end)
	defer cancel()
	var interrupted atomic.Bool
	go func() {
		select {
		case <-t.stop:
			interrupted.Store(true)
			cancel()
		case <-ctx.Done():
		}
	}()
	err := trial.RunProbes(ctx, t.probes, func(p host.Prober) { fmt.Fprintf(t.g.stderr, "probe %s passed\n", p) })
	switch {
	case interrupted.Load():
		return t.revert(exitRevertedTimeout, "interrupted by a signal while probing"), true
	case err != nil:
		return t.revert(exitRevertedProbe, trial.ProbeFailed(err).Reason), true
	}
	return exitOK, false
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

// wait waits for a confirmation until the deadline: Enter on a terminal,
// `netagent confirm`; the deadline, a signal or `netagent rollback`
// revert.
func (t *tryRun) wait() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reqs, err := host.WatchRequests(ctx, t.rt.StateDir())
	if err != nil {
		return t.revert(exitInternal, err.Error())
	}
	enter := make(chan struct{}, 1)
	tty := isTerminal(os.Stdin) && isTerminal(os.Stderr)
	if tty {
		// An Enter typed before now came over the connection as it was
		// before the change: it proves nothing about the new one, so it
		// must not confirm. Drop what the terminal holds.
		if err := unix.IoctlSetInt(int(os.Stdin.Fd()), unix.TCFLSH, unix.TCIFLUSH); err != nil {
			return t.revert(exitInternal, fmt.Sprintf("flushing the terminal's input: %v", err))
		}
		go func() {
			if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err == nil {
				enter <- struct{}{}
			}
		}()
	}
	deadline := time.NewTimer(time.Until(t.tr.Trial.Deadline))
	defer deadline.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	fmt.Fprintf(t.g.stderr, "trial applied: confirm with `netagent confirm`%s before %s, or it reverts\n",
		map[bool]string{true: " or Enter", false: ""}[tty], t.tr.Trial.Deadline.Format(time.RFC3339))
	for {
		select {
		case <-tick.C:
			if tty {
				fmt.Fprintf(t.g.stderr, "\rreverting in %3ds (Enter confirms) ", int(time.Until(t.tr.Trial.Deadline).Round(time.Second).Seconds()))
			}
		case <-enter:
			return t.confirm("confirmed on the terminal")
		case r, ok := <-reqs:
			switch {
			case !ok:
				return t.revert(exitInternal, "lost the watch on the trial directory")
			case r == host.RequestConfirmed:
				return t.confirm("confirmed by `netagent confirm`")
			default:
				return t.revert(exitRevertedTimeout, "reverted on request (`netagent rollback`)")
			}
		case <-deadline.C:
			return t.revert(exitRevertedTimeout, fmt.Sprintf("not confirmed within %v", t.o.timeout))
		case s := <-t.stop:
			return t.revert(exitRevertedTimeout, fmt.Sprintf("interrupted by %v", s))
		}
	}
}

func (t *tryRun) confirm(how string) int {
	if code, ok := t.record(); !ok {
		return t.revert(code, "the trial's intent could not be recorded as the new version")
	}
	if err := t.tr.Confirm(); err != nil {
		fmt.Fprintf(t.g.stderr, "\nnetagent: confirming: %v\n", err)
		return exitInternal
	}
	fmt.Fprintf(t.g.stdout, "confirmed: %s\n", how)
	return exitOK
}

// revert reverts the trial for reason and returns code, or exitInternal
// when the revert itself failed (the trial stays pending, its outcome
// recorded when the journal does not account for its records, for
// `netagent confirm` and `rollback` to report: `netagent recover`, apply,
// try and the daemon's start revert it; plan and check do not).
func (t *tryRun) revert(code int, reason string) int {
	t.g.log.WithField("reason", reason).Warn("reverting the trial")
	res, err := t.tr.Revert(context.Background(), reason)
	if err != nil {
		if res != nil {
			for _, p := range res.Problems {
				fmt.Fprintf(t.g.stderr, "%s\n", p)
			}
		}
		fmt.Fprintf(t.g.stderr, "\nnetagent: the trial (%s) could not be reverted: %v\n", reason, err)
		return exitInternal
	}
	fmt.Fprintf(t.g.stderr, "\nreverted: %s (%d operations)\n", reason, len(res.Ops))
	return code
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
