package trial

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/probe"
)

// The failures that revert a trial say which probe and when: RunProbes'
// at the end of its window, Watch's at the failure that reached the count;
// both wrap the probe's own error.
func TestProbeFailureSaysWhichAndWhen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		bad := &script{name: "bad", fail: failed}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err := RunProbes(ctx, []host.Prober{bad}, nil)
		cancel()
		f := FailureOf(err)
		if f == nil || f.Probe != "bad" || !errors.Is(err, probe.ErrFailed) || !strings.HasPrefix(err.Error(), "probe bad did not pass: probe failed") {
			t.Fatalf("RunProbes = %v (%+v)", err, f)
		}
		if got := f.At.Sub(start); got < 3*time.Second-ProbeRetry || got > 3*time.Second {
			t.Errorf("RunProbes' failure at %v, want at the end of its 3s window", got)
		}
		start = time.Now()
		err = <-Watch(context.Background(), []host.Prober{&script{name: "w", fail: failed}}, time.Second, FailuresToRevert)
		if f = FailureOf(err); f == nil || f.Probe != "w" || f.At.Sub(start) != 3*time.Second {
			t.Errorf("Watch = %v (%+v), want w failed 3s after the start", err, f)
		}
		if FailureOf(errors.New("other")) != nil {
			t.Error("FailureOf of another error")
		}
	})
}

// CheckSpecs bounds a trial's probes and names the bad one by index.
func TestCheckSpecs(t *testing.T) {
	ok := []string{"ping:192.0.2.1", "dns:example.org"}
	if err := CheckSpecs(ok); err != nil {
		t.Errorf("CheckSpecs(%v) = %v", ok, err)
	}
	if err := CheckSpecs([]string{"ping:192.0.2.1", "nope:x"}); err == nil || !strings.HasPrefix(err.Error(), "probes[1]: ") {
		t.Errorf("a bad spec: %v", err)
	}
	if err := CheckSpecs(make([]string, MaxProbes+1)); err == nil || !strings.HasPrefix(err.Error(), "probes: 17 given, at most 16") {
		t.Errorf("too many: %v", err)
	}
}
