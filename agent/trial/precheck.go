package trial

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/probe"
)

// Failing is a probe that did not pass before the trial changed
// anything.
type Failing struct {
	Probe string
	Err   error
}

// String is the failure (a probe's error names the probe).
func (f Failing) String() string { return f.Err.Error() }

// ErrFailingBefore refuses a trial whose probes must pass before it
// (--probe-must-pass-before) and do not.
var ErrFailingBefore = errors.New("probes fail before any change")

// PreCheck runs every probe once, concurrently, within ctx (the caller
// bounds it by the probe timeout), before the trial changes anything. A
// probe that fails already is not the change's doing (kubernetes-nmstate's
// rule): it is reported among failing and left out of counted, the probes
// that judge the trial. A probe that could not run at all (not
// probe.ErrFailed: an arping on a link the change creates) is counted.
func PreCheck(ctx context.Context, probes []host.Prober) (counted []host.Prober, failing []Failing) {
	errs := make([]error, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Go(func() { errs[i] = p.Probe(ctx) })
	}
	wg.Wait()
	for i, p := range probes {
		if errors.Is(errs[i], probe.ErrFailed) && ctx.Err() == nil {
			failing = append(failing, Failing{Probe: p.String(), Err: errs[i]})
			continue
		}
		counted = append(counted, p)
	}
	return counted, failing
}

// Refusal is the error of a trial refused because probes fail before it.
func Refusal(failing []Failing) error {
	s := make([]string, len(failing))
	for i, f := range failing {
		s[i] = f.String()
	}
	return fmt.Errorf("%w (--probe-must-pass-before): %s", ErrFailingBefore, strings.Join(s, "; "))
}

// ProbeInterval is how often a standing trial's probes run again while it
// waits for its confirmation; FailuresToRevert failures of one probe in a
// row revert it then (a lost packet does not).
const (
	ProbeInterval    = time.Second
	FailuresToRevert = 3
)

// Watch runs the probes every interval until ctx ends, and sends on the
// channel it returns the failure (a *ProbeFailure) of the first probe
// that failed after rounds in a row (then closes it); nothing while they
// pass.
func Watch(ctx context.Context, probes []host.Prober, interval time.Duration, after int) <-chan error {
	out := make(chan error, 1)
	if len(probes) == 0 {
		return out
	}
	go func() {
		defer close(out)
		fails := make([]int, len(probes))
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if err := watchRound(ctx, probes, fails, after); err != nil {
				out <- err
				return
			}
		}
	}()
	return out
}

// watchRound runs each probe once, counting its failures in a row (fails),
// and returns the failure of one that reached after.
func watchRound(ctx context.Context, probes []host.Prober, fails []int, after int) error {
	for i, p := range probes {
		err := p.Probe(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err == nil:
			fails[i] = 0
			continue
		}
		if fails[i]++; fails[i] >= after {
			return &ProbeFailure{Probe: p.String(), At: time.Now(), Err: err,
				msg: fmt.Sprintf("probe %s failed %d times in a row after the change: %v", p, fails[i], err)}
		}
	}
	return nil
}
