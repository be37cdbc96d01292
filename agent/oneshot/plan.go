package oneshot

import (
	"context"

	"github.com/netagent/netagent/agent/host"
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
