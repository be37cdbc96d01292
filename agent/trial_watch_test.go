package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/probe"
	"github.com/netagent/netagent/agent/trial"
)

// breaksAfter is a probe that passes its first n runs, then fails.
type breaksAfter struct {
	spec string
	n    int64
	runs atomic.Int64
}

func (b *breaksAfter) Probe(context.Context) error {
	if b.runs.Add(1) > b.n {
		return fmt.Errorf("probe %s: %w: no answer", b.spec, probe.ErrFailed)
	}
	return nil
}
func (b *breaksAfter) String() string { return b.spec }

// watchOf is a Config.Watch over fake probes, through trial.Watch.
func watchOf(ps ...host.Prober) ProbeWatcher {
	return func(ctx context.Context, _ []string, every time.Duration) <-chan error {
		return trial.Watch(ctx, ps, every, trial.FailuresToRevert)
	}
}

// A standing daemon trial whose probe starts failing while it waits for
// its confirmation reverts after trial.FailuresToRevert rounds at the
// probe interval, long before its deadline; the outcome names the probe
// and when it failed, between the trial's start and its deadline, and the
// revert after it. A confirmed trial's watch stops.
func TestTrialWatchRevertsEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTrialRig(t)
		dns := &breaksAfter{spec: "dns:ok.test@198.51.100.1", n: 2}
		r.a.cfg.Watch, r.a.cfg.ProbeInterval = watchOf(dns), time.Second
		resp := r.call(api.Request{Command: api.CmdTry, Intent: json.RawMessage(twoRoutesDoc), Timeout: "60s", Probes: []string{dns.spec}})
		if resp.Error != "" || resp.Status.Trial == nil || !r.k.has(route2Ref) {
			t.Fatalf("try: %+v", resp)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		st := r.status()
		o := st.LastTrial
		if st.Trial != nil || o == nil || o.Result != "reverted" || r.k.has(route2Ref) {
			t.Fatalf("after the probe broke: trial %+v, last %+v", st.Trial, o)
		}
		if o.Probe != dns.spec || !strings.Contains(o.Reason, "probe failed: probe "+dns.spec+" failed 3 times in a row after the change") {
			t.Errorf("outcome %+v: want the watched probe named", o)
		}
		if !o.Since.Before(o.ProbeFailedAt) || o.At.Before(o.ProbeFailedAt) || !o.At.Before(o.Deadline) {
			t.Errorf("since %v, probe failed %v, reverted %v, deadline %v: want since < failed <= reverted < deadline", o.Since, o.ProbeFailedAt, o.At, o.Deadline)
		}
		if got := o.ProbeFailedAt.Sub(o.Since); got != 5*time.Second {
			t.Errorf("the probe failed %v after the start, want 5s (2 rounds passed, 3 failed, 1s apart)", got)
		}

		ok := &breaksAfter{spec: "ping:192.0.2.1", n: 1 << 30}
		r.a.cfg.Watch = watchOf(ok)
		if resp := r.call(api.Request{Command: api.CmdTry, Intent: json.RawMessage(twoRoutesDoc), Timeout: "60s", Probes: []string{ok.spec}}); resp.Error != "" {
			t.Fatalf("try: %+v", resp)
		}
		if resp := r.call(api.Request{Command: api.CmdConfirm}); resp.Error != "" {
			t.Fatalf("confirm: %+v", resp)
		}
		synctest.Wait()
		runs := ok.runs.Load()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if ok.runs.Load() != runs {
			t.Errorf("the confirmed trial's probe still runs: %d runs, then %d", runs, ok.runs.Load())
		}
	})
}
