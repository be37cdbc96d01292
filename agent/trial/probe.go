package trial

import (
	"context"
	"fmt"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/probe"
	"github.com/netagent/netagent/internal/netnsx"
)

// ProbeRetry is how long a probe that did not pass waits before it is run
// again.
const ProbeRetry = 200 * time.Millisecond

// Window is the end of a trial's probe round started at now: the probe
// timeout later, and never past the trial's deadline.
func Window(now time.Time, probeTimeout time.Duration, deadline time.Time) time.Time {
	end := now.Add(probeTimeout)
	if deadline.Before(end) {
		return deadline
	}
	return end
}

// RunProbes runs the probes in order, each until it passed once or ctx
// ends (the caller bounds ctx by Window), and calls passed (if set) for
// each that passed. The error, a *ProbeFailure, names the first probe
// that did not pass.
func RunProbes(ctx context.Context, probes []host.Prober, passed func(host.Prober)) error {
	for _, p := range probes {
		var err error
		for {
			if err = p.Probe(ctx); err == nil || ctx.Err() != nil {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(ProbeRetry):
			}
		}
		if err != nil {
			return &ProbeFailure{Probe: p.String(), At: time.Now(), Err: err, msg: fmt.Sprintf("probe %s did not pass: %v", p, err)}
		}
		if passed != nil {
			passed(p)
		}
	}
	return nil
}

// ParseProbes parses --probe specs (agent/probe) into checks run inside
// the target namespace t.
func ParseProbes(specs []string, t *netnsx.Target) ([]host.Prober, error) {
	ps, err := probe.ParseAll(specs)
	if err != nil {
		return nil, err
	}
	out := make([]host.Prober, 0, len(ps))
	for _, p := range ps {
		out = append(out, inTarget{p: p, t: t})
	}
	return out, nil
}

// inTarget runs a probe in the target namespace.
type inTarget struct {
	p probe.Probe
	t *netnsx.Target
}

func (p inTarget) Probe(ctx context.Context) error { return p.p.Run(ctx, p.t) }
func (p inTarget) String() string                  { return p.p.String() }

// PreChecks is the daemon's pre-check (agent.PreChecker): PreCheck of the
// specs inside rt's namespace; specs that do not parse are all counted
// (the daemon refuses them when it checks the trial).
func PreChecks(rt *host.Runtime) func(ctx context.Context, specs []string) ([]string, []Failing) {
	return func(ctx context.Context, specs []string) ([]string, []Failing) {
		ps, err := ParseProbes(specs, rt.Target())
		if err != nil {
			return specs, nil
		}
		counted, failing := PreCheck(ctx, ps)
		out := make([]string, len(counted))
		for i, p := range counted {
			out[i] = p.String()
		}
		return out, failing
	}
}

// Probes is the daemon's prober (agent.Prober): it runs a trial's probes,
// given as specs, inside rt's namespace (RunProbes), until ctx ends (the
// daemon bounds the round by Window; it runs outside the loop).
func Probes(rt *host.Runtime) func(ctx context.Context, specs []string) error {
	return func(ctx context.Context, specs []string) error {
		ps, err := ParseProbes(specs, rt.Target())
		if err != nil {
			return err
		}
		return RunProbes(ctx, ps, nil)
	}
}

// Watches is the daemon's watch of a standing trial (agent.ProbeWatcher):
// Watch of the specs inside rt's namespace, every interval, reverting
// after FailuresToRevert failures of one probe in a row.
func Watches(rt *host.Runtime) func(ctx context.Context, specs []string, every time.Duration) <-chan error {
	return func(ctx context.Context, specs []string, every time.Duration) <-chan error {
		ps, err := ParseProbes(specs, rt.Target())
		if err != nil {
			out := make(chan error, 1)
			out <- err
			close(out)
			return out
		}
		return Watch(ctx, ps, every, FailuresToRevert)
	}
}
