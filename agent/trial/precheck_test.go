package trial

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/probe"
)

// script is a fake probe: its n-th run (from 0) passes unless fail says
// otherwise; runs counts them.
type script struct {
	name string
	fail func(n int64) error
	runs atomic.Int64
}

func (s *script) Probe(context.Context) error { return s.fail(s.runs.Add(1) - 1) }
func (s *script) String() string              { return s.name }

func failed(n int64) error { return fmt.Errorf("%w: run %d", probe.ErrFailed, n) }

func TestPreCheckLeavesOutWhatFailsBefore(t *testing.T) {
	good := &script{name: "good", fail: func(int64) error { return nil }}
	bad := &script{name: "bad", fail: failed}
	cannot := &script{name: "cannot", fail: func(int64) error { return errors.New("link eth9 not found") }}
	counted, failing := PreCheck(context.Background(), []host.Prober{good, bad, cannot})
	if len(counted) != 2 || counted[0] != good || counted[1] != cannot {
		t.Errorf("counted = %v, want good and cannot (a probe that cannot run yet still judges)", counted)
	}
	if len(failing) != 1 || failing[0].Probe != "bad" || failing[0].String() != "probe failed: run 0" {
		t.Errorf("failing = %v, want bad alone", failing)
	}
	for _, s := range []*script{good, bad, cannot} {
		if s.runs.Load() != 1 {
			t.Errorf("%s ran %d times, want once", s.name, s.runs.Load())
		}
	}
	err := Refusal(failing)
	if !errors.Is(err, ErrFailingBefore) || !strings.Contains(err.Error(), "--probe-must-pass-before): probe failed: run 0") {
		t.Errorf("Refusal = %v", err)
	}
}

// A pre-check cut short (the caller's context ended) counts every probe:
// none was seen failing before.
func TestPreCheckCancelledCountsAll(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	bad := &script{name: "bad", fail: failed}
	counted, failing := PreCheck(ctx, []host.Prober{bad})
	if len(counted) != 1 || len(failing) != 0 {
		t.Errorf("PreCheck cancelled = %v, %v; want bad counted, none failing", counted, failing)
	}
}

// The early revert: a probe that passed and then fails FailuresToRevert
// rounds in a row is reported after that many intervals, not later; a
// failure now and then is not.
func TestWatchRevertsAfterFailuresInARow(t *testing.T) {
	flaky := &script{name: "flaky", fail: func(n int64) error {
		if n%2 == 0 {
			return failed(n)
		}
		return nil
	}}
	breaks := &script{name: "breaks", fail: func(n int64) error {
		if n >= 5 {
			return failed(n)
		}
		return nil
	}}
	const every = 20 * time.Millisecond
	start := time.Now()
	var err error
	select {
	case err = <-Watch(context.Background(), []host.Prober{flaky, breaks}, every, FailuresToRevert):
	case <-time.After(5 * time.Second):
		t.Fatal("no failure reported in 5s")
	}
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "probe breaks failed 3 times in a row after the change: probe failed: run 7") {
		t.Errorf("Watch = %v, want breaks' third failure in a row", err)
	}
	if !strings.HasPrefix(err.Error(), "probe") || FaultOf(err.Error()) != Probe {
		t.Errorf("the reason %q is not read back as a probe fault", err)
	}
	// 8 rounds (5 passes, 3 failures): 8 intervals, and a little.
	if took < 8*every || took > 8*every+time.Second {
		t.Errorf("reported after %v, want about %v", took, 8*every)
	}
	t.Logf("reported after %v (8 rounds of %v)", took, every)
}

func TestWatchEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ok := &script{name: "ok", fail: func(int64) error { return nil }}
	ch := Watch(ctx, []host.Prober{ok}, time.Millisecond, 1)
	time.Sleep(20 * time.Millisecond)
	cancel()
	if err, open := <-ch; open || err != nil {
		t.Errorf("after its context ended Watch sent %v (open %v), want the channel closed", err, open)
	}
	if ok.runs.Load() == 0 {
		t.Error("the probe never ran")
	}
	select {
	case err := <-Watch(context.Background(), nil, time.Millisecond, 1):
		t.Errorf("Watch of no probes sent %v", err)
	case <-time.After(20 * time.Millisecond):
	}
}
