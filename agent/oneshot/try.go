package oneshot

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/trial"
	dg "github.com/netagent/netagent/depgraph"
)

// A one-shot trial (`netagent try`): the intent applied under the
// target's lock, journaled (host.TrialRun), judged as the daemon judges
// its trials (agent/trial), probed, then confirmed (the terminal's Enter,
// `netagent confirm`, or at once with AutoConfirm) or reverted exactly (the
// deadline, a signal, `netagent rollback`, a failed item, an unkept change,
// a probe that did not pass).

// TryOptions are the options of a one-shot trial.
type TryOptions struct {
	Timeout      time.Duration
	ProbeTimeout time.Duration
	// Probes are the --probe specs, for the trial's record.
	Probes      []string
	KeepPartial bool
	// AutoConfirm confirms as soon as the apply verified and every probe
	// passed.
	AutoConfirm bool
	// ProbesMustPassBefore refuses the trial, before any change, when a
	// probe fails before it (--probe-must-pass-before); without it such a
	// probe is reported and does not judge the trial (trial.PreCheck).
	ProbesMustPassBefore bool
	// ProbeInterval is how often the probes run again while the trial
	// waits for its confirmation (0: trial.ProbeInterval); failing
	// trial.FailuresToRevert times in a row they revert it.
	ProbeInterval time.Duration
	Apply         host.ApplyOptions
}

// Trial is one one-shot trial, on a Runtime whose lock the caller holds
// (and whose earlier pending trial it recovered).
type Trial struct {
	RT       *host.Runtime
	Intended *dg.Graph
	// Files are the intent files, for the trial's record (the revert's
	// read-back hint).
	Files   map[string][]byte
	Probes  []host.Prober
	Options TryOptions
	// Record records the trial's intent as the new version, on confirm.
	Record func() error
	// Leases applies the intent again with the DHCPv4 leases the apply
	// acquired (nil: none to acquire).
	Leases func(context.Context, *host.Result) (*host.Result, error)
	// Stop reverts the trial (SIGINT, SIGTERM).
	Stop <-chan os.Signal
	// BeforeWait runs once the trial stands, before the wait for a
	// confirmation: it returns the channel of a confirmation typed on the
	// terminal (nil: none); an error reverts the trial.
	BeforeWait func() (<-chan struct{}, error)
	// Report, if set, is told how the trial goes.
	Report func(TryEvent)

	tr *host.TrialRun
}

// TryEvent is a step of a trial, for the caller to show: one of
// TryFailingBefore, TryApplied, TryProbePassed, TryWaiting, TryTick.
type TryEvent any

// TryApplied: the apply stands (Ops operations, Batches journal records).
type TryApplied struct{ Ops, Batches int }

// TryProbePassed: the probe passed.
type TryProbePassed struct{ Probe string }

// TryFailingBefore: the probe fails before the trial changed anything
// (trial.PreCheck): it does not judge the trial.
type TryFailingBefore struct{ trial.Failing }

// TryWaiting: the trial waits for a confirmation until Deadline; Enter:
// on the terminal too.
type TryWaiting struct {
	Deadline time.Time
	Enter    bool
}

// TryTick: a second passed while waiting; Left is until the deadline.
type TryTick struct{ Left time.Duration }

// TrySpec is what Try needs beside the namespace's options.
type TrySpec struct {
	TryOptions
	// Judged, when set, is told the judgement of the protection before
	// anything changes (as ApplySpec.Judged).
	Judged func(*Guarded)
	// Check, when set, refuses the trial before anything changes
	// (--if-version: versions.Check).
	Check func() error
	// Record records the trial's intent as the new version, on confirm.
	Record func(*Intent) error
	// Signals, when set, is called as the trial begins (after Start): the
	// channel of the signals that revert it (the Trial's Stop), and what
	// to call once it ended.
	Signals func() (stop <-chan os.Signal, release func())
	// BeforeWait and Report are the Trial's.
	BeforeWait func() (<-chan struct{}, error)
	Report     func(TryEvent)
}

// Try runs the trial of the intent files paths on the namespace of o
// (Start: the gate, the intent loaded, a pending trial recovered, one
// render), to its end.
func Try(ctx context.Context, o *Options, paths []string, spec TrySpec) (*TryResult, error) {
	t, err := Start(ctx, o, paths)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return t.Try(ctx, paths, spec)
}

// Try runs the trial of the target's intent (read again from paths, for
// the trial's record): judged by the protection of links first (a refused
// trial changes nothing), then checked (spec.Check), then run.
func (t *Target) Try(ctx context.Context, paths []string, spec TrySpec) (*TryResult, error) {
	t.Runtime.SetAcquireTimeout(AcquireTimeout(spec.Apply.Wait))
	gd, err := t.Guard(ctx)
	if err != nil {
		return nil, err
	}
	if spec.Judged != nil {
		spec.Judged(gd)
	}
	if gd.Stops() {
		return &TryResult{Refused: true}, nil
	}
	if spec.Check != nil {
		if err := spec.Check(); err != nil {
			return nil, err
		}
	}
	tr, err := t.trial(gd, paths, spec)
	if err != nil {
		return nil, err
	}
	if spec.Signals != nil {
		stop, release := spec.Signals()
		defer release()
		tr.Stop = stop
	}
	return tr.Run(), nil
}

// trial is the Trial of the target's intent that gd let through.
func (t *Target) trial(gd *Guarded, paths []string, spec TrySpec) (*Trial, error) {
	files, _, err := ReadFiles(paths)
	if err != nil {
		return nil, err
	}
	probes, err := trial.ParseProbes(spec.Probes, t.Runtime.Target())
	if err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	rt, lf := t.Runtime, t.Leases
	tr := &Trial{RT: rt, Intended: gd.Apply, Files: files, Probes: probes, Options: spec.TryOptions,
		Leases: func(ctx context.Context, res *host.Result) (*host.Result, error) {
			return ApplyLeasesResult(ctx, rt, lf, gd, res, spec.Apply)
		},
		BeforeWait: spec.BeforeWait, Report: spec.Report}
	if spec.Record != nil {
		tr.Record = func() error { return spec.Record(t.Intent) }
	}
	return tr, nil
}

// TryResult is how a one-shot trial ended.
type TryResult struct {
	// Refused: the trial would disrupt a protected link (Guard), or with
	// ProbesMustPassBefore probes fail before it (FailingBefore); nothing
	// was changed.
	Refused bool
	// FailingBefore are the probes that failed before the trial changed
	// anything: they did not judge it (or refused it).
	FailingBefore []trial.Failing
	// Confirmed, and How.
	Confirmed bool
	How       string
	// Revert is why it reverted (nil: confirmed, or not begun).
	Revert *trial.Revert
	// Problems are what the apply left, when they reverted it.
	Problems []host.Problem
	// Reverted is the revert's result.
	Reverted *host.Result
	// RecordErr: the trial's intent could not be recorded as the new
	// version (the trial reverted).
	RecordErr error
	// Err: the trial could not begin (Revert nil), its revert failed
	// (Revert set: it stays pending), or its confirm failed (Confirmed).
	Err error
}

// Run runs the trial to its end.
func (t *Trial) Run() *TryResult {
	failing := t.preCheck()
	if len(failing) > 0 && t.Options.ProbesMustPassBefore {
		return &TryResult{Refused: true, FailingBefore: failing}
	}
	res := t.run()
	res.FailingBefore = failing
	return res
}

func (t *Trial) run() *TryResult {
	now := time.Now()
	tr, err := t.RT.BeginTrial(host.Trial{Started: now, Deadline: now.Add(t.Options.Timeout), Files: t.Files, Probes: t.Options.Probes})
	if err != nil {
		return &TryResult{Err: fmt.Errorf("beginning the trial: %w", err)}
	}
	t.tr = tr
	if res := t.apply(); res != nil {
		return res
	}
	if res := t.probe(); res != nil {
		return res
	}
	if t.Options.AutoConfirm {
		return t.confirm("the apply verified and every probe passed")
	}
	return t.wait()
}

// preCheck runs every probe once before anything changes, within the
// probe timeout, and leaves out of t.Probes those that fail already
// (trial.PreCheck), which it reports and returns.
func (t *Trial) preCheck() []trial.Failing {
	if len(t.Probes) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), t.Options.ProbeTimeout)
	defer cancel()
	counted, failing := trial.PreCheck(ctx, t.Probes)
	for _, f := range failing {
		t.RT.Log().WithField("probe", f.Probe).WithField("error", f.Err).Warn("trial: the probe fails before any change: it does not judge the trial")
		t.report(TryFailingBefore{f})
	}
	t.Probes = counted
	return failing
}

// apply applies the intent (and again with the leases it acquired) until
// Stop, and judges what it left; nil: the trial stands.
func (t *Trial) apply() *TryResult {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupted := t.stopOn(ctx, cancel) // the apply stops; the revert puts back what it did
	res, err := t.RT.Apply(ctx, t.Intended, t.Options.Apply)
	if err == nil && t.Leases != nil {
		res, err = t.Leases(ctx, res)
	}
	cancel()
	switch {
	case err != nil:
		return t.revert(trial.Internal, fmt.Sprintf("the apply failed: %v", err))
	case interrupted.Load():
		return t.revert(trial.Timeout, "interrupted by a signal during the apply")
	}
	// A converged apply is verified: it read the kernel back after every
	// change (host.Converge), and a change the kernel did not keep is one
	// of its problems. Reading back once more would cost as much as that
	// pass (half a second at 100k routes).
	if _, rev := trial.Judge(trial.FromApply(res), t.Options.KeepPartial); rev != nil {
		out := t.revert(rev.Fault, rev.Reason)
		out.Problems = res.Problems
		return out
	}
	t.report(TryApplied{Ops: len(res.Ops), Batches: t.tr.Batches()})
	return nil
}

// probe runs the probes until each passed once, within the probe
// timeout (trial.Window); nil: they passed.
func (t *Trial) probe() *TryResult {
	if len(t.Probes) == 0 {
		return nil
	}
	end := trial.Window(time.Now(), t.Options.ProbeTimeout, t.tr.Trial.Deadline)
	ctx, cancel := context.WithDeadline(context.Background(), end)
	defer cancel()
	interrupted := t.stopOn(ctx, cancel)
	err := trial.RunProbes(ctx, t.Probes, func(p host.Prober) { t.report(TryProbePassed{Probe: p.String()}) })
	switch {
	case interrupted.Load():
		return t.revert(trial.Timeout, "interrupted by a signal while probing")
	case err != nil:
		rev := trial.ProbeFailed(err)
		return t.revert(rev.Fault, rev.Reason)
	}
	return nil
}

// wait waits for a confirmation until the deadline: Enter on a terminal,
// `netagent confirm`; the deadline, Stop, `netagent rollback` or a probe
// failing again and again meanwhile (trial.Watch) revert.
func (t *Trial) wait() *TryResult {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reqs, err := host.WatchRequests(ctx, t.RT.StateDir())
	if err != nil {
		return t.revert(trial.Internal, err.Error())
	}
	var enter <-chan struct{}
	if t.BeforeWait != nil {
		if enter, err = t.BeforeWait(); err != nil {
			return t.revert(trial.Internal, err.Error())
		}
	}
	deadline := time.NewTimer(time.Until(t.tr.Trial.Deadline))
	defer deadline.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	every := t.Options.ProbeInterval
	if every <= 0 {
		every = trial.ProbeInterval
	}
	failed := trial.Watch(ctx, t.Probes, every, trial.FailuresToRevert)
	t.report(TryWaiting{Deadline: t.tr.Trial.Deadline, Enter: enter != nil})
	for {
		select {
		case err := <-failed:
			return t.revert(trial.Probe, err.Error())
		case <-tick.C:
			t.report(TryTick{Left: time.Until(t.tr.Trial.Deadline)})
		case <-enter:
			return t.confirm("confirmed on the terminal")
		case r, ok := <-reqs:
			return t.requested(r, ok)
		case <-deadline.C:
			return t.revert(trial.Timeout, fmt.Sprintf("not confirmed within %v", t.Options.Timeout))
		case s := <-t.Stop:
			return t.revert(trial.Timeout, fmt.Sprintf("interrupted by %v", s))
		}
	}
}

// requested ends the trial as another process asked (ok false: the watch
// of the requests was lost).
func (t *Trial) requested(r host.Request, ok bool) *TryResult {
	switch {
	case !ok:
		return t.revert(trial.Internal, "lost the watch on the trial directory")
	case r == host.RequestConfirmed:
		return t.confirm("confirmed by `netagent confirm`")
	}
	return t.revert(trial.Timeout, "reverted on request (`netagent rollback`)")
}

func (t *Trial) confirm(how string) *TryResult {
	if t.Record != nil {
		if err := t.Record(); err != nil {
			res := t.revert(trial.Internal, "the trial's intent could not be recorded as the new version")
			res.RecordErr = err
			return res
		}
	}
	if err := t.tr.Confirm(); err != nil {
		return &TryResult{Confirmed: true, How: how, Err: fmt.Errorf("confirming: %w", err)}
	}
	return &TryResult{Confirmed: true, How: how}
}

// revert reverts the trial for reason. A revert that failed leaves the
// trial pending, its outcome recorded when the journal does not account
// for its records, for `netagent confirm` and `rollback` to report:
// `netagent recover`, apply, try and the daemon's start revert it; plan
// and check do not.
func (t *Trial) revert(f trial.Fault, reason string) *TryResult {
	t.RT.Log().WithField("reason", reason).Warn("reverting the trial")
	res, err := t.tr.Revert(context.Background(), reason)
	if err != nil {
		err = fmt.Errorf("the trial (%s) could not be reverted: %w", reason, err)
	}
	return &TryResult{Revert: &trial.Revert{Fault: f, Reason: reason}, Reverted: res, Err: err}
}

// stopOn cancels ctx when Stop fires before ctx ends, and says so.
func (t *Trial) stopOn(ctx context.Context, cancel context.CancelFunc) *atomic.Bool {
	var interrupted atomic.Bool
	go func() {
		select {
		case <-t.Stop:
			interrupted.Store(true)
			cancel()
		case <-ctx.Done():
		}
	}()
	return &interrupted
}

func (t *Trial) report(e TryEvent) {
	if t.Report != nil {
		t.Report(e)
	}
}
