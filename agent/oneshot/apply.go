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

// Outcome is Converged or NotConverged.
func (a *Applied) Outcome() Outcome {
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
