package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/probe"
	"github.com/netagent/netagent/agent/trial"
)

// preCheckFailing is a pre-check where the probes named fail.
func preCheckFailing(names ...string) PreChecker {
	return func(_ context.Context, specs []string) (counted []string, failing []trial.Failing) {
		for _, s := range specs {
			if slices.Contains(names, s) {
				failing = append(failing, trial.Failing{Probe: s, Err: fmt.Errorf("probe %s: %w: no reply", s, probe.ErrFailed)})
				continue
			}
			counted = append(counted, s)
		}
		return counted, failing
	}
}

// A probe failing before the daemon's trial does not judge it: the probe
// round runs the others, the status names it; with ProbesMustPassBefore
// the trial is refused before any change.
func TestTrialPreCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTrialRig(t)
		r.a.cfg.PreCheck = preCheckFailing("ping:192.0.2.9")
		rounds := r.gateProbes(false)
		specs := []string{"ping:192.0.2.1", "ping:192.0.2.9"}
		req := api.Request{Command: api.CmdTry, Intent: json.RawMessage(twoRoutesDoc), Timeout: "30s", Probes: specs,
			ProbesMustPassBefore: true}
		resp := r.call(req)
		if !resp.ProbesFailing || !strings.Contains(resp.Error, "probes fail before any change (--probe-must-pass-before): probe ping:192.0.2.9: probe failed: no reply") {
			t.Fatalf("with ProbesMustPassBefore: %+v", resp)
		}
		if r.k.has(route2Ref) || r.status().Trial != nil || len(r.trials.events) != 0 {
			t.Fatalf("the refused trial changed something: %v", r.trials.events)
		}
		req.ProbesMustPassBefore = false
		done := make(chan api.Response, 1)
		go func() { done <- r.call(req) }()
		pc := <-rounds
		if !slices.Equal(pc.specs, []string{"ping:192.0.2.1"}) {
			t.Errorf("the probe round runs %v, want only the probe that passed before", pc.specs)
		}
		pc.result <- nil
		resp = <-done
		st := resp.Status.Trial
		if resp.Error != "" || st == nil || !slices.Equal(st.Probes, []string{"ping:192.0.2.1"}) ||
			len(st.FailingBefore) != 1 || !strings.Contains(st.FailingBefore[0], "probe ping:192.0.2.9: probe failed") {
			t.Fatalf("try: %+v, trial %+v", resp, st)
		}
		if !r.k.has(route2Ref) {
			t.Error("the trial did not apply")
		}
	})
}
