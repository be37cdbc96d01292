package oneshot

import (
	"context"
	"time"

	"github.com/netagent/netagent/agent/host"
	dg "github.com/netagent/netagent/depgraph"
)

// DefaultApplyWait is apply's --wait: long enough for a NIC's carrier to
// come up after the apply set it up.
const DefaultApplyWait = 10 * time.Second

// AcquireTimeout bounds each DISCOVER of a one-shot command: its wait, the
// default wait with a wait of 0.
func AcquireTimeout(wait time.Duration) time.Duration {
	if wait <= 0 {
		return DefaultApplyWait
	}
	return wait
}

// Applied is the outcome of an apply (and of a rollback's).
type Applied struct {
	// Applied is what the apply did; nil when the protection refused it
	// (Outcome Refused).
	*host.Applied
	// Guarded is what the protection decided (the orphans kept).
	Guarded *Guarded
	// Took is how long the apply took.
	Took time.Duration
	// Leases is the lease held on each interface with dhcp4.
	Leases []LeaseReport
	// RememberErr is why the protected links could not be remembered (the
	// apply itself is done).
	RememberErr error
}

// Outcome is how the apply ended: Refused (nothing changed), Converged or
// NotConverged.
func (a *Applied) Outcome() Outcome {
	if a.Applied == nil {
		return Refused
	}
	if a.Converged() {
		return Converged
	}
	return NotConverged
}

// Progress, when set, observes an apply of intended on rt; the returned
// stop ends it.
type Progress func(rt *host.Runtime, intended *dg.Graph) (stop func())

// ApplyGuarded applies what the protection of links let through (gd) with
// its lease rounds (ApplyLeases), remembers the protected links of the
// intent (intended) and reports: the end of apply and of rollback.
func ApplyGuarded(ctx context.Context, rt *host.Runtime, gd *Guarded, lf *Leases, intended *dg.Graph,
	opts host.ApplyOptions, progress Progress) (*Applied, error) {
	start := time.Now()
	stop := func() {}
	if progress != nil {
		stop = progress(rt, intended)
	}
	res, err := rt.ApplyPredicted(ctx, gd.Apply, opts)
	if err == nil {
		res, err = ApplyLeases(ctx, rt, lf, gd, res, opts)
	}
	stop()
	if err != nil {
		return nil, err
	}
	out := &Applied{Applied: res, Guarded: gd, Took: time.Since(start)}
	out.RememberErr = rt.Remember(gd.Protection, host.Declares(intended), res.Current, gd.Force)
	out.Leases = lf.Report(rt, &res.Result)
	return out, nil
}

// ApplySpec is what Apply does beyond Options.
type ApplySpec struct {
	host.ApplyOptions
	// Judged, when set, is told the judgement of the protection before
	// anything changes (the refusals, forced or not).
	Judged func(*Guarded)
	// Version, when set, records the intent as a new version
	// (RecordVersion), after the judgement (a refused change is no
	// version) and before the kernel changes; its error stops the apply.
	Version *VersionSpec
	// Progress observes the apply.
	Progress Progress
}

// Apply is `netagent apply`: it converges the namespace once to the
// intent files at paths (Start), judged by the protection of links (a
// refusal stops it before anything changes: the result's Outcome is
// Refused), with its lease rounds, until ctx ends.
func Apply(ctx context.Context, o *Options, paths []string, spec ApplySpec) (*Applied, error) {
	t, err := Start(context.WithoutCancel(ctx), o, paths) // a signal does not cut a recovery short

	if err != nil {
		return nil, err
	}
	defer t.Close()
	return t.Apply(ctx, spec)
}

// Apply applies the target's intent (Apply).
func (t *Target) Apply(ctx context.Context, spec ApplySpec) (*Applied, error) {
	t.Runtime.SetAcquireTimeout(AcquireTimeout(spec.Wait))
	gd, err := t.Guard(context.WithoutCancel(ctx)) // ctx ends the apply, not its judgement
	if err != nil {
		return nil, err
	}
	if spec.Judged != nil {
		spec.Judged(gd)
	}
	if gd.Stops() {
		return &Applied{Guarded: gd}, nil
	}
	if spec.Version != nil {
		if _, err := RecordVersion(t.opts, *spec.Version, t.Intent.Files); err != nil {
			return nil, err
		}
	}
	t.Intent.Files = nil // recorded: the parsed intent (15 MB at 100k routes) need not outlive the apply's start
	res, err := ApplyGuarded(ctx, t.Runtime, gd, t.Leases, t.Graph, spec.ApplyOptions, spec.Progress)
	if err != nil {
		return nil, &StepError{Step: "apply", Err: err}
	}
	return res, nil
}
