package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/internal/memstore"
)

// envelopeDoc is a trial envelope of intent with spec.
func envelopeDoc(t *testing.T, spec member.TrialSpec, intent string) string {
	t.Helper()
	raw, err := json.Marshal(member.TrialEnvelope{Trial: spec, Intent: json.RawMessage(intent)})
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// startFleetTrialRig starts a fleet trial rig over a store holding h1's
// uplink and the group's routes, with the prober p, and settles.
func startFleetTrialRig(t *testing.T, p *fleetProber) (*fleetTrialRig, *memstore.Store) {
	t.Helper()
	m := memstore.New()
	m.Put(testLayout.HostDoc("h1", "uplink.json"), uplinkDoc)
	m.Put(groupRoutes, routeDoc)
	f := newFleetTrialRig(t, m, t.TempDir(), p)
	f.start()
	settle()
	return f, m
}

// A fleet trial's probes run once before its intent is delivered: one
// failing already is named in the host's fleet.Status (FailingBefore)
// and left out of the probe round, which judges the trial with the
// others; with probesMustPassBefore the trial reverts before its intent
// is ever applied.
func TestFleetTrialPreCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fleetProber{failBefore: []string{"ping:192.0.2.9"}}
		f, m := startFleetTrialRig(t, p)
		spec := member.TrialSpec{Timeout: "60s", Probes: []string{"ping:192.0.2.1", "ping:192.0.2.9"}, ProbesMustPassBefore: true}
		rev := m.Put(groupRoutes, envelopeDoc(t, spec, twoRoutesDoc))
		settle()
		settle()
		tr := f.trial(t)
		if tr == nil || tr.Revision != int64(rev) || tr.State != member.FleetTrialReverted ||
			!strings.Contains(tr.Reason, "probes fail before any change (--probe-must-pass-before): probe ping:192.0.2.9: probe failed: no reply") {
			t.Fatalf("with probesMustPassBefore: trial %+v", tr)
		}
		if f.k.has(route2Ref) || p.count() != 0 || len(f.trials.events) != 0 {
			t.Fatalf("the refused trial was applied: route2 %v, probe rounds %d, journal %v", f.k.has(route2Ref), p.count(), f.trials.events)
		}

		spec.ProbesMustPassBefore = false
		rev = m.Put(groupRoutes, envelopeDoc(t, spec, twoRoutesDoc))
		settle()
		settle()
		time.Sleep(time.Minute) // confirmed at its deadline
		settle()
		tr = f.trial(t)
		if tr == nil || tr.Revision != int64(rev) || tr.State != member.FleetTrialConfirmed || len(tr.FailingBefore) != 1 ||
			!strings.Contains(tr.FailingBefore[0], "probe ping:192.0.2.9: probe failed") {
			t.Fatalf("trial %+v: want confirmed, the probe failing before named", tr)
		}
		if !f.k.has(route2Ref) || p.count() < 2 {
			t.Fatalf("route2 %v, probe rounds %d: want the trial applied and probed through its window", f.k.has(route2Ref), p.count())
		}
		if got := p.lastSpecs(); len(got) != 1 || got[0] != "ping:192.0.2.1" {
			t.Errorf("the probe rounds ran %v, want only the probe that passed before", got)
		}
	})
}

// A fleet trial whose counted probe fails once the host converged reverts
// at the end of its probe round (the envelope's probeTimeout), not at the
// trial's deadline: the host's fleet.Status names the probe and places
// its failure after the trial started and the revert after it, both
// before the deadline.
func TestFleetTrialProbeRevertsBeforeDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fleetProber{run: func(ctx context.Context, specs []string) error {
			return trial.RunProbes(ctx, []host.Prober{&breaksAfter{spec: specs[0]}}, nil)
		}}
		f, m := startFleetTrialRig(t, p)
		rev := m.Put(groupRoutes, envelopeDoc(t, member.TrialSpec{Timeout: "60s", ProbeTimeout: "3s", Probes: []string{"dns:ok.test@198.51.100.1"}}, twoRoutesDoc))
		time.Sleep(10 * time.Second)
		synctest.Wait()
		tr := f.trial(t)
		if tr == nil || tr.Revision != int64(rev) || tr.State != member.FleetTrialReverted || tr.Probe != "dns:ok.test@198.51.100.1" {
			t.Fatalf("trial %+v: want reverted by its probe", tr)
		}
		if f.k.has(route2Ref) || !f.k.has(routeRef) {
			t.Fatalf("not reverted to the previous document: %v", f.k.takeOps())
		}
		if !tr.Started.Before(tr.ProbeFailedAt) || tr.Ended.Before(tr.ProbeFailedAt) || !tr.Ended.Before(tr.Deadline) {
			t.Errorf("started %v, probe failed %v, ended %v, deadline %v: want started < failed <= ended < deadline", tr.Started, tr.ProbeFailedAt, tr.Ended, tr.Deadline)
		}
		if left := tr.Deadline.Sub(tr.Ended); left < 50*time.Second {
			t.Errorf("reverted %v before the deadline, want the probe timeout (3s) after convergence", left)
		}
	})
}

// Envelopes from the store are bounded like the intent: too many probes,
// a probe that does not parse, a probe timeout past the timeout and a
// timeout past MaxTrialTimeout are refused, naming the field.
func TestFleetTrialEnvelopeBounds(t *testing.T) {
	many := make([]string, trial.MaxProbes+1)
	for i := range many {
		many[i] = fmt.Sprintf("ping:192.0.2.%d", i+1)
	}
	for _, c := range []struct {
		spec member.TrialSpec
		want string
	}{
		{member.TrialSpec{Probes: many}, "trial.probes: 17 given, at most 16"},
		{member.TrialSpec{Probes: []string{"ping:192.0.2.1", "dns:"}}, "trial.probes[1]: "},
		{member.TrialSpec{Probes: []string{"ping:" + strings.Repeat("a", trial.MaxSpecSize)}}, "trial.probes[0]: 517 bytes: at most 512"},
		{member.TrialSpec{Timeout: "10s", ProbeTimeout: "20s"}, "trial.probeTimeout: \"20s\""},
		{member.TrialSpec{Timeout: "48h"}, "trial.timeout: \"48h\" is no positive duration of at most 24h0m0s"},
	} {
		_, _, err := member.ParseTrialEnvelope([]byte(envelopeDoc(t, c.spec, uplinkDoc)))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "trial envelope: ") {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
}
