package trial

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/netagent/netagent/agent/host"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/plural"
)

// DefaultTimeout is a trial's timeout when none is given.
const DefaultTimeout = 60 * time.Second

// DefaultProbeTimeout bounds a trial's probe round when none is given.
const DefaultProbeTimeout = 10 * time.Second

// DefaultWait is how long a trial whose items are blocked waits for the
// link events that unblock them, when none is given (the one-shot apply's
// --wait default).
const DefaultWait = 10 * time.Second

// Fault is the kind of reason a trial reverts for.
type Fault int

// The faults.
const (
	// Timeout: not confirmed in time, or reverted on request (a signal,
	// `netagent rollback`).
	Timeout Fault = iota
	// Failed: an item failed or stayed blocked.
	Failed
	// Unkept: the read-back after the apply differs from the intent (the
	// kernel did not keep a change).
	Unkept
	// Probe: a probe did not pass.
	Probe
	// Internal: the apply, the watch or the record failed.
	Internal
)

// Revert is a decision to revert a trial.
type Revert struct {
	Fault  Fault
	Reason string
}

// Step is what a trial does next once its apply (and each later turn)
// settled.
type Step int

// The steps.
const (
	// Stands: the trial is verified, or kept with what converged; its
	// probes run next.
	Stands Step = iota
	// Wait: items it blocked wait for a link; judge again after the next
	// turn, or once the wait is over.
	Wait
	// Reverts: see the Revert.
	Reverts
)

// Problems is what a trial's apply left, none of it there before the
// trial (Since removes those).
type Problems struct {
	// Failed and Blocked are the items that failed or stay blocked.
	Failed, Blocked []dg.ItemRef
	// Unkept are the items whose change the kernel did not keep (the
	// read-back after the apply).
	Unkept []dg.ItemRef
	// Waiting: the blocked items may still unblock (the wait for their
	// link events is not over).
	Waiting bool
	// Err: operations failed that no failed item names (host.Result.Err).
	Err error
}

// FromApply sorts what a one-shot apply left (host.Result) into
// Problems. With operations failed, a change the kernel did not keep is
// one more failed item, not a difference the read-back found.
func FromApply(res *host.Result) Problems {
	var p Problems
	for _, pr := range res.Problems {
		switch {
		case pr.Unkept && res.Err == nil:
			p.Unkept = append(p.Unkept, pr.Ref)
		case pr.Blocked:
			p.Blocked = append(p.Blocked, pr.Ref)
		default:
			p.Failed = append(p.Failed, pr.Ref)
		}
	}
	if res.Err != nil && len(res.Problems) == 0 {
		p.Err = res.Err
	}
	return p
}

// Since leaves out of p the items that were failed or blocked before the
// trial: not its doing, they neither revert it nor hold it up.
func (p Problems) Since(before map[dg.ItemRef]bool) Problems {
	drop := func(refs []dg.ItemRef) []dg.ItemRef {
		return slices.DeleteFunc(slices.Clone(refs), func(r dg.ItemRef) bool { return before[r] })
	}
	p.Failed, p.Blocked, p.Unkept = drop(p.Failed), drop(p.Blocked), drop(p.Unkept)
	return p
}

// Partial reports whether items failed or stay blocked: a trial kept with
// them (keep partial) is not verified.
func (p Problems) Partial() bool { return len(p.Failed)+len(p.Blocked) > 0 || p.Err != nil }

// Judge decides what a trial does with what its apply left, keeping what
// converged or not (keepPartial): an item it made fail reverts it; while
// items it blocked may unblock it waits; then they revert it; kept with
// failed or blocked items it stands unverified; a change the kernel did
// not keep reverts it whatever keepPartial says.
func Judge(p Problems, keepPartial bool) (Step, *Revert) {
	switch {
	case p.Err != nil && len(p.Failed)+len(p.Blocked) == 0 && !keepPartial:
		return Reverts, &Revert{Failed, fmt.Sprintf("0 items failed or stayed blocked, but operations failed: %v", p.Err)}
	case len(p.Failed) > 0 && !keepPartial:
		return Reverts, &Revert{Failed, fmt.Sprintf("%s failed or stayed blocked (%s first)", plural.N(len(p.Failed)+len(p.Blocked), "item"), p.Failed[0])}
	case len(p.Blocked) > 0 && p.Waiting:
		return Wait, nil
	case len(p.Blocked) > 0 && !keepPartial:
		return Reverts, &Revert{Failed, fmt.Sprintf("%s failed or stayed blocked (%s first, blocked)", plural.N(len(p.Failed)+len(p.Blocked), "item"), p.Blocked[0])}
	case p.Partial():
		return Stands, nil
	case len(p.Unkept) > 0:
		return Reverts, &Revert{Unkept, fmt.Sprintf("verification found %s from the intent (%s first)", plural.N(len(p.Unkept), "difference"), p.Unkept[0])}
	}
	return Stands, nil
}

// ProbeFailed is the revert of a probe round that did not pass (err, from
// RunProbes).
func ProbeFailed(err error) *Revert { return &Revert{Probe, err.Error()} }

// FaultOf is the fault of a revert's reason as a daemon words it
// (Revert.Reason, status.TrialOutcome.Reason): the one-shot's exit code for
// a trial run through the daemon.
func FaultOf(reason string) Fault {
	switch {
	case strings.HasPrefix(reason, "probe"):
		return Probe
	case strings.HasPrefix(reason, "verification"):
		return Unkept
	case strings.Contains(reason, " failed or stayed blocked"), strings.Contains(reason, "items failed"): // "1 item failed …", "N items failed …"
		return Failed
	}
	return Timeout
}

// Params are a trial's timings.
type Params struct {
	// Timeout: reverted unless confirmed by then.
	Timeout time.Duration
	// ProbeTimeout bounds the probe round (Window).
	ProbeTimeout time.Duration
	// Wait bounds the wait for the link events that unblock its blocked
	// items.
	Wait time.Duration
}

// ParseParams parses a trial's timings as a request gives them ("": the
// default): a positive timeout and probe timeout, a wait of 0 or more.
func ParseParams(timeout, probeTimeout, wait string) (Params, error) {
	p := Params{Timeout: DefaultTimeout, ProbeTimeout: DefaultProbeTimeout, Wait: DefaultWait}
	var err error
	if p.Timeout, err = positive("timeout", timeout, DefaultTimeout); err != nil {
		return Params{}, err
	}
	if p.ProbeTimeout, err = positive("probe timeout", probeTimeout, DefaultProbeTimeout); err != nil {
		return Params{}, err
	}
	if wait != "" {
		if p.Wait, err = time.ParseDuration(wait); err != nil || p.Wait < 0 {
			return Params{}, fmt.Errorf("wait %q: want a duration (10s, 0s)", wait)
		}
	}
	return p, nil
}

// positive parses a positive duration s ("": def).
func positive(what, s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s %q: want a positive duration (60s)", what, s)
	}
	return d, nil
}
