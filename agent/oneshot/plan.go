package oneshot

import (
	"context"
	"fmt"
	"slices"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/reconciler"
)

// Planned is the outcome of Plan.
type Planned struct {
	*host.PlanResult
	// Guarded is what the protection decided: the plan is of its Apply.
	Guarded *Guarded
}

// Outcome is Refused when the protection refuses the change (unless
// forced), NotConverged when items would fail or stay blocked, else
// Converged.
func (p *Planned) Outcome() Outcome {
	switch {
	case p.Guarded.Stops():
		return Refused
	case len(p.Problems) > 0 || p.Err != nil:
		return NotConverged
	}
	return Converged
}

// Plan is `netagent plan`: the exact operations an apply of the intent
// files at paths would run now, judged as the apply judges them, and what
// would fail. It changes nothing.
func Plan(ctx context.Context, o *Options, paths []string) (*Planned, error) {
	t, err := Start(ctx, o, paths)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	gd, err := t.Guard(ctx)
	if err != nil {
		return nil, err
	}
	res, err := t.Runtime.Plan(ctx, gd.Apply)
	if err != nil {
		return nil, &StepError{Step: "plan", Err: err}
	}
	return &Planned{PlanResult: res, Guarded: gd}, nil
}

// SideEffectText says what the kernel does to an item, after which
// operation, and what apply does about it.
func SideEffectText(e configurators.SideEffect) string {
	switch {
	case e.Certain && e.Refused != nil:
		return fmt.Sprintf("%s: changed by the kernel after %q: %s; a follow-up pass tries to write it again: %v", e.Ref, e.Cause, e.Reason, e.Refused)
	case e.Certain:
		return fmt.Sprintf("%s: changed by the kernel after %q: %s; a follow-up pass writes it again", e.Ref, e.Cause, e.Reason)
	}
	return fmt.Sprintf("%s: may be changed by the kernel after %q: %s; apply then runs a follow-up pass to write it again", e.Ref, e.Cause, e.Reason)
}

// WaitNote says what apply does beyond the planned passes while items wait
// for a link: it waits for link events (--wait) and converges again at
// each, which retries the operations that failed; how often depends on the
// events, so a plan cannot list those. Items blocked only behind a failure
// are not waited for. "" when no item waits for a link.
func WaitNote(res *host.PlanResult) string {
	if !slices.ContainsFunc(res.Problems, func(p host.Problem) bool { return p.WaitsOnLink }) {
		return ""
	}
	note := "while items wait for a link, apply waits for link events (up to --wait) and converges again at each"
	if slices.ContainsFunc(res.Ops, func(e reconciler.OpLogEntry) bool { return e.Err != nil }) {
		note += "; the failed operations are retried then, and fail again unless what is in their way is gone"
	}
	return note
}
