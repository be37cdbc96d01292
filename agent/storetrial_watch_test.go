package agent

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/fleet"
)

// breakingProber passes its first n runs, then fails every one, and
// every one once broken is set.
func breakingProber(n int) (*fleetProber, *atomic.Bool) {
	var runs atomic.Int32
	var broken atomic.Bool
	return &fleetProber{run: func(context.Context, []string) error {
		if runs.Add(1) > int32(n) || broken.Load() {
			return errors.New("ping 192.0.2.1: no reply")
		}
		return nil
	}}, &broken
}

// A fleet trial whose probes pass their first round, then fail, is not
// confirmed: its probes are watched through the trial window (as the
// daemon's standing trial), and three failures in a row revert it at once,
// long before its deadline, naming the probe.
func TestFleetTrialWatchedThroughItsWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := breakingProber(5)
		f, m := startFleetTrialRig(t, p)
		start := time.Now()
		rev := m.Put(groupRoutes, envelopeDoc(t, member.TrialSpec{Timeout: "10m", Probes: []string{"ping:192.0.2.1"}}, twoRoutesDoc))
		settle()
		settle()
		if tr := f.trial(t); tr == nil || tr.State != member.FleetTrialPending || !f.k.has(route2Ref) {
			t.Fatalf("after the first probe round: trial %+v, route2 %v; want pending and applied", tr, f.k.has(route2Ref))
		}
		time.Sleep(15 * time.Second)
		settle()
		tr := f.trial(t)
		if tr == nil || tr.Revision != int64(rev) || tr.State != member.FleetTrialReverted || tr.Probe != "ping:192.0.2.1" ||
			!strings.Contains(tr.Reason, "failed 3 times in a row") {
			t.Fatalf("trial %+v: want reverted by the probe failing 3 times in a row", tr)
		}
		if tr.Ended.Sub(start) > time.Minute {
			t.Errorf("reverted %v after the push, want within seconds of the probe failing (deadline 10m)", tr.Ended.Sub(start))
		}
		if f.k.has(route2Ref) || !f.k.has(routeRef) {
			t.Errorf("not reverted to the previous document: %v", f.k.takeOps())
		}
	})
}

// A trial with a bake (a rollout wave's) is confirmed at its deadline,
// then its probes keep running through the bake: one failing three times
// in a row makes the host Degraded, with a condition naming the probe
// (which a rollout counts against the wave's tolerance); the trial stays
// confirmed, nothing reverts.
func TestFleetTrialBakeDegraded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, broken := breakingProber(1 << 30)
		f, m := startFleetTrialRig(t, p)
		spec := member.TrialSpec{Timeout: "20s", Probes: []string{"ping:192.0.2.1"}, Bake: "10m"}
		rev := m.Put(groupRoutes, envelopeDoc(t, spec, twoRoutesDoc))
		settle()
		time.Sleep(30 * time.Second)
		settle()
		st, _ := f.fleetStatus(t)
		if st.Trial == nil || st.Trial.State != member.FleetTrialConfirmed || st.Degraded || st.Trial.BakeUntil.IsZero() {
			t.Fatalf("after the trial window: %+v (trial %+v), want confirmed, baking, not Degraded", st, st.Trial)
		}
		broken.Store(true)
		time.Sleep(10 * time.Second)
		settle()
		st, _ = f.fleetStatus(t)
		if st.Trial == nil || st.Trial.State != member.FleetTrialConfirmed || st.Trial.Revision != int64(rev) || st.Trial.BakeProbe != "ping:192.0.2.1" {
			t.Fatalf("trial %+v: want confirmed, its bake probe named", st.Trial)
		}
		if !st.Degraded || !hasCondition(st, member.CondBakeProbe, "ping:192.0.2.1") {
			t.Errorf("status %+v: want Degraded with a %s condition naming the probe", st, member.CondBakeProbe)
		}
		if !f.k.has(route2Ref) {
			t.Error("a failure during the bake reverted the trial")
		}
	})
}

func hasCondition(st fleet.Status, typ, text string) bool {
	for _, c := range st.Conditions {
		if c.Type == typ && c.Status && strings.Contains(c.Message, text) {
			return true
		}
	}
	return false
}
