package oneshot

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/items"
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
	case p.Err != nil || len(p.Problems) > 0 && CarrierWaits(p.PlanResult) == nil:
		return NotConverged
	}
	return Converged
}

// CarrierWaits returns the links whose carrier the blocked items of res
// wait for when each of its problems is such a wait on a link that its
// operations set up (a NIC the change brings up: the carrier comes a
// moment after, and apply waits for it, up to --wait): an apply converges.
// nil when there is another problem, or none.
func CarrierWaits(res *host.PlanResult) []string {
	var links []string
	for _, p := range res.Problems {
		if !p.Blocked || p.WaitsOnState == "" || p.MissingNIC != "" || !setsUp(res.Ops, p.WaitsOnState) {
			return nil
		}
		if !slices.Contains(links, p.WaitsOnState) {
			links = append(links, p.WaitsOnState)
		}
	}
	slices.Sort(links)
	return links
}

// setsUp reports whether ops create or modify the interface link into one
// that is up.
func setsUp(ops reconciler.OperationLog, link string) bool {
	return slices.ContainsFunc(ops, func(e reconciler.OpLogEntry) bool {
		ifc, ok := e.Item.(*items.Interface)
		return ok && e.Err == nil && e.Op != reconciler.OpDelete && ifc.IfName == link && ifc.AdminUp
	})
}

// MissingNICs returns the NICs that the problems of res name as not
// existing on this host (host.Problem.MissingNIC), sorted, each once.
func MissingNICs(problems []host.Problem) []string {
	var nics []string
	for _, p := range problems {
		if p.MissingNIC != "" && !slices.Contains(nics, p.MissingNIC) {
			nics = append(nics, p.MissingNIC)
		}
	}
	slices.Sort(nics)
	return nics
}

// MissingNICNote says that the NICs of problems that do not exist on this
// host are not waited for: "" when there are none.
func MissingNICNote(problems []host.Problem) string {
	nics := MissingNICs(problems)
	if len(nics) == 0 {
		return ""
	}
	what := "NIC " + nics[0] + " does not exist"
	if len(nics) > 1 {
		what = "NICs " + strings.Join(nics, ", ") + " do not exist"
	}
	return what + " on this host: apply does not wait for a NIC nothing creates (--wait-for-nics waits up to --wait for it to be plugged in); the daemon configures it when it appears"
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
	if links := CarrierWaits(res); links != nil {
		return "apply sets " + strings.Join(links, ", ") + " up and waits for the carrier (up to --wait) before it adds what waits for it"
	}
	if !slices.ContainsFunc(res.Problems, func(p host.Problem) bool { return p.WaitsOnLink && p.MissingNIC == "" }) {
		return ""
	}
	note := "while items wait for a link, apply waits for link events (up to --wait) and converges again at each"
	if slices.ContainsFunc(res.Ops, func(e reconciler.OpLogEntry) bool { return e.Err != nil }) {
		note += "; the failed operations are retried then, and fail again unless what is in their way is gone"
	}
	return note
}
