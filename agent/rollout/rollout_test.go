package rollout

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/fleet"
)

func TestSelectionStable(t *testing.T) {
	var pool []Candidate
	for _, h := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		pool = append(pool, Candidate{Host: h, Labels: map[string]string{"odd": map[bool]string{true: "y", false: "n"}[h[0]%2 == 1]}})
	}
	rev := slices.Clone(pool)
	slices.Reverse(rev)
	o1, o2 := Order("r1", pool), Order("r1", rev)
	if !equalHosts(o1, o2) {
		t.Fatalf("order depends on the input order: %v vs %v", hostsOf(o1), hostsOf(o2))
	}
	if equalHosts(o1, Order("r2", pool)) {
		t.Errorf("two rollouts order the pool the same: %v", hostsOf(o1))
	}
	waves := []Wave{{Name: "n", Hosts: []string{"c", "c", "zz"}}, {Name: "l", Labels: map[string]string{"odd": "y"}},
		{Name: "p", Percent: 70}, {Name: "all", Percent: 100}}
	taken := map[string]bool{}
	var got [][]string
	for i := range waves {
		sel := Select(&waves[i], o1, taken)
		for _, h := range sel {
			if taken[h] {
				t.Fatalf("wave %s takes %s again", waves[i].Name, h)
			}
			taken[h] = true
		}
		got = append(got, sel)
	}
	if !slices.Equal(got[0], []string{"c", "zz"}) {
		t.Errorf("by name: %v", got[0])
	}
	if len(got[1]) != 4 { // a e g i ("c" is taken)
		t.Errorf("by label: %v", got[1])
	}
	if n := 2 + len(got[1]) + len(got[2]); n != 7+1 { // cumulative: 7 of the pool of 10, plus "zz" outside it
		t.Errorf("70%%: %d taken, want 8: %v", n, got)
	}
	if len(taken) != 11 {
		t.Errorf("100%%: %d taken, want every host: %v", len(taken), got)
	}
}

func hostsOf(c []Candidate) (out []string) {
	for _, x := range c {
		out = append(out, x.Host)
	}
	return out
}

func equalHosts(a, b []Candidate) bool { return slices.Equal(hostsOf(a), hostsOf(b)) }

func TestSpecErrorsNameThePath(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`{"rollout": "r", "document": "d.json", "intent": "i", "waves": [{"name": "w", "percent": 120}]}`, "waves[0].percent"},
		{`{"rollout": "r", "document": "d.json", "intent": "i", "waves": [{"name": "w", "hosts": ["a"], "failureTolerance": "x"}]}`, "waves[0].failureTolerance"},
		{`{"rollout": "r", "document": "d.json", "intent": "i", "waves": [{"name": "w", "hosts": ["a"]}, {"name": "v"}]}`, "waves[1].hosts"},
		{`{"rollout": "r", "document": "d.json", "intent": "i", "waves": [{"name": "w", "hosts": ["a"], "bake": "-1m"}]}`, "waves[0].bake"},
		{`{"rollout": "r", "document": "d.json", "intent": "i", "waves": [{"name": "w", "hosts": ["a"], "probes": ["nope"]}]}`, "waves[0].probes[0]"},
		{`{"rollout": "r", "document": "hosts/x/d.json", "intent": "i", "waves": [{"name": "w", "hosts": ["a"]}]}`, "document"},
		{`{"rollout": "a/b", "document": "d.json", "intent": "i", "waves": [{"name": "w", "hosts": ["a"]}]}`, "rollout"},
		{`{"rollout": "r", "document": "d.json", "intent": "i", "waves": [{"name": "w", "hosts": ["a"], "bogus": 1}]}`, "bogus"},
	} {
		if _, err := ParseSpec([]byte(c.doc)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s", c.doc, err, c.want)
		}
	}
	w := Wave{FailureTolerance: []byte(`"2%"`)}
	if n, _ := w.Tolerance(250); n != 5 {
		t.Errorf("2%% of 250: %d", n)
	}
}

// pushedOnce fails unless every host key got at most one envelope, and
// returns how many got one.
func pushedOnce(t *testing.T, cs *countStore) int {
	t.Helper()
	for k, n := range cs.pushes {
		if n > 1 {
			t.Errorf("%s pushed %d times", k, n)
		}
	}
	return len(cs.pushes)
}

func TestThreeWavesComplete(t *testing.T) {
	f, cs, clock := started(t, 20, threeWaves)
	began := clock.Now()
	r, err := drive(t, newController(cs, clock, "c1"), f, clock)
	if err != nil || r.Phase != PhaseCompleted {
		t.Fatalf("phase %s, err %v", r.Phase, err)
	}
	s := load(t, cs)
	if n := pushedOnce(t, cs); n != 20 {
		t.Errorf("%d hosts pushed, want 20", n)
	}
	sizes := []int{len(s.Waves[0].Hosts), len(s.Waves[1].Hosts), len(s.Waves[2].Hosts)}
	if !slices.Equal(sizes, []int{2, 3, 15}) { // 25% of 20 is 5, cumulative
		t.Errorf("wave sizes %v, want [2 3 15]", sizes)
	}
	if took := clock.Now().Sub(began); took < 40*time.Minute {
		t.Errorf("took %s, less than the bakes (40m)", took)
	}
	for h, hs := range s.Hosts {
		if hs.State != HostConfirmed {
			t.Errorf("%s: %s", h, hs.State)
		}
	}
	// Each host's record is a key of its own; the state names the hosts.
	recs, _, err := cs.List(context.Background(), Dir(layout, "dns-v3")+"/hosts")
	if err != nil || len(recs) != 20 {
		t.Errorf("%d host records, want 20 (%v)", len(recs), err)
	}
	if e, err := cs.Read(context.Background(), stateKey(layout, "dns-v3")); err != nil || strings.Contains(string(e.Value), `"prevVersion"`) {
		t.Errorf("the state holds host records: %s %v", e.Value, err)
	}
}

func TestFailingHostsHaltTheirWave(t *testing.T) {
	f, cs := newFleet(t, 20)
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	spec := testSpec(t, strings.Replace(threeWaves, `"concurrency": 5`, `"concurrency": 1`, 1))
	start(t, cs, spec, clock)
	// The rest wave's hosts in the rollout's order; two of them fail.
	order := hostsOf(Order("dns-v3", candidates(f.hosts)))
	var rest []string // the hosts after the canaries and the quarter's 3
	for _, h := range order {
		if h != "edge-001" && h != "edge-002" {
			rest = append(rest, h)
		}
	}
	rest = rest[3:]
	f.fail[rest[3]], f.fail[rest[7]] = true, true
	r, err := drive(t, newController(cs, clock, "c1"), f, clock)
	if err != nil || r.Phase != PhaseHalted {
		t.Fatalf("phase %s, err %v", r.Phase, err)
	}
	s := load(t, cs)
	if s.Wave != 2 || !strings.Contains(s.Reason, "wave rest: 2 hosts failed") || !strings.Contains(s.Reason, "tolerance of 1") {
		t.Errorf("halted at wave %d: %s", s.Wave, s.Reason)
	}
	// Concurrency 1, tolerance 1: the hosts up to the second failure.
	if n := pushedOnce(t, cs); n != 2+3+8 {
		t.Errorf("%d hosts pushed, want 13 (5 before the wave, 8 of it up to its second failure)", n)
	}
	for _, h := range rest[8:] {
		if cs.pushes[layout.HostDoc(h, "20-dns.json")] != 0 {
			t.Errorf("%s pushed after the halt", h)
		}
	}
}

func candidates(hosts []string) (out []Candidate) {
	for _, h := range hosts {
		out = append(out, Candidate{Host: h})
	}
	return out
}

func TestCanaryFailureHaltsBeforeTheRest(t *testing.T) {
	f, cs, clock := started(t, 20, threeWaves)
	f.sick["edge-002"] = true // confirms, then is not Ready in the bake
	r, err := drive(t, newController(cs, clock, "c1"), f, clock)
	if err != nil || r.Phase != PhaseHalted {
		t.Fatalf("phase %s, err %v", r.Phase, err)
	}
	if n := pushedOnce(t, cs); n != 2 {
		t.Errorf("%d hosts pushed, want the 2 canaries", n)
	}
	if s := load(t, cs); !s.Hosts["edge-002"].NotReady || s.Wave != 0 {
		t.Errorf("wave %d, edge-002 %+v", s.Wave, s.Hosts["edge-002"])
	}
}

// A canary whose probe fails during the bake (its member reports it
// Degraded, naming the probe) halts the rollout over a tolerance of 0:
// the rest is never pushed, and the host's reason names the probe.
func TestBakeProbeFailureHalts(t *testing.T) {
	f, cs, clock := started(t, 20, threeWaves)
	f.bakeFails["edge-001"] = true
	r, err := drive(t, newController(cs, clock, "c1"), f, clock)
	if err != nil || r.Phase != PhaseHalted {
		t.Fatalf("phase %s, err %v", r.Phase, err)
	}
	if n := pushedOnce(t, cs); n != 2 {
		t.Errorf("%d hosts pushed, want the 2 canaries", n)
	}
	s := load(t, cs)
	if hs := s.Hosts["edge-001"]; hs.State != HostConfirmed || !hs.NotReady || !strings.Contains(hs.Reason, "during the bake: probe ping:192.0.2.1 failed") {
		t.Errorf("edge-001 %+v: want confirmed, not Ready, the bake's probe named", hs)
	}
	if s.Wave != 0 || !strings.Contains(s.Reason, "wave canary") {
		t.Errorf("wave %d, reason %q", s.Wave, s.Reason)
	}
}

func TestKilledAfterEveryWriteResumes(t *testing.T) {
	f, cs, clock := started(t, 12, threeWaves)
	kills := 0
	for run := 1; ; run++ {
		// Every controller's first write is its lease: odd runs die right
		// after it, even ones after the write that follows it.
		cs.killAt = cs.writes + 1 + run%2
		c := newController(cs, clock, "c"+string(rune('a'+run%26))+time.Duration(run).String())
		r, err := drive(t, c, f, clock)
		if err == nil {
			if r.Phase != PhaseCompleted {
				t.Fatalf("phase %s", r.Phase)
			}
			break
		}
		if !errors.Is(err, errKilled) {
			t.Fatalf("run %d: %v", run, err)
		}
		kills++
		clock.advance(LeaseTTL) // the dead controller's lease expires
		if run > 1000 {
			t.Fatal("no end after 1000 restarts")
		}
	}
	if n := pushedOnce(t, cs); n != 12 {
		t.Errorf("%d hosts pushed, want 12", n)
	}
	if kills < 30 {
		t.Errorf("only %d kills", kills)
	}
	t.Logf("%d controllers killed, one after each write", kills)
}

func TestOneControllerAtATime(t *testing.T) {
	f, cs, clock := started(t, 4, threeWaves)
	c1, c2 := newController(cs, clock, "c1"), newController(cs, clock, "c2")
	if _, err := c1.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Step(context.Background()); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("second controller: %v, want ErrLeaseHeld", err)
	}
	clock.advance(LeaseTTL / 2)
	if _, err := c1.Step(context.Background()); err != nil { // renews
		t.Fatal(err)
	}
	clock.advance(LeaseTTL - time.Second)
	if _, err := c2.Step(context.Background()); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("second controller within the renewed lease: %v", err)
	}
	clock.advance(2 * time.Second) // c1 stopped renewing
	if r, err := drive(t, c2, f, clock); err != nil || r.Phase != PhaseCompleted {
		t.Fatalf("second controller after the lease expired: %s %v", r.Phase, err)
	}
	if _, err := c1.Step(context.Background()); !errors.Is(err, ErrLeaseHeld) {
		t.Errorf("first controller back: %v, want ErrLeaseHeld", err)
	}
	if err := c1.Release(context.Background()); err != nil { // not its lease: left
		t.Fatal(err)
	}
	if _, err := c1.Step(context.Background()); !errors.Is(err, ErrLeaseHeld) {
		t.Errorf("first controller after releasing another's lease: %v, want ErrLeaseHeld", err)
	}
	if err := c2.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := c1.Step(context.Background()); err != nil {
		t.Errorf("first controller after the second released its lease: %v", err)
	}
	pushedOnce(t, cs)
}

const gated = `{"rollout": "dns-v3", "document": "20-dns.json", "intent": "dns-v3.json", "waves": [
 {"name": "canary", "hosts": ["edge-001"], "bake": "1m"},
 {"name": "gate", "approvalRequired": true},
 {"name": "rest", "percent": 100, "concurrency": 1, "failureTolerance": 0}]}`

func TestApproveHaltResume(t *testing.T) {
	f, cs, clock := started(t, 6, gated)
	c := newController(cs, clock, "c1")
	ctx := context.Background()
	idle := func() Result { // steps until nothing changes
		t.Helper()
		for range 100 {
			r, err := c.Step(ctx)
			f.react()
			if err != nil {
				t.Fatal(err)
			}
			if !r.Wrote {
				return r
			}
		}
		t.Fatal("no rest")
		return Result{}
	}
	idle()
	clock.advance(2 * time.Minute)
	idle()
	if s := load(t, cs); s.Wave != 1 || len(cs.pushes) != 1 {
		t.Fatalf("before approval: wave %d, %d pushed", s.Wave, len(cs.pushes))
	}
	clock.advance(time.Hour)
	if idle(); len(cs.pushes) != 1 {
		t.Fatal("the gate opened without approval")
	}
	if _, err := Approve(ctx, cs, layout, "dns-v3"); err != nil {
		t.Fatal(err)
	}
	if _, err := Approve(ctx, cs, layout, "dns-v3"); !errors.Is(err, ErrNoGate) {
		t.Fatalf("second approve: %v, want ErrNoGate", err)
	}
	if _, err := Halt(ctx, cs, layout, "dns-v3"); err != nil {
		t.Fatal(err)
	}
	if r := idle(); r.Phase != PhaseHalted || len(cs.pushes) != 1 {
		t.Fatalf("halted: %s, %d pushed", r.Phase, len(cs.pushes))
	}
	if _, err := Resume(ctx, cs, layout, "dns-v3"); err != nil {
		t.Fatal(err)
	}
	if r, err := drive(t, c, f, clock); err != nil || r.Phase != PhaseCompleted || pushedOnce(t, cs) != 6 {
		t.Fatalf("after resume: %s %v, %d pushed", r.Phase, err, len(cs.pushes))
	}
	if _, err := Approve(ctx, cs, layout, "dns-v3"); !errors.Is(err, ErrFinished) {
		t.Errorf("approve of a completed rollout: %v", err)
	}
	if _, err := Abort(ctx, cs, layout, "dns-v3"); !errors.Is(err, ErrFinished) {
		t.Errorf("abort of a completed rollout: %v", err)
	}
}

func TestResumeAcceptsTheFailuresSoFar(t *testing.T) {
	f, cs, clock := started(t, 20, threeWaves)
	f.fail["edge-001"] = true
	c := newController(cs, clock, "c1")
	if r, _ := drive(t, c, f, clock); r.Phase != PhaseHalted {
		t.Fatalf("phase %s", r.Phase)
	}
	if _, err := Resume(context.Background(), cs, layout, "dns-v3"); err != nil {
		t.Fatal(err)
	}
	if r, err := drive(t, c, f, clock); err != nil || r.Phase != PhaseCompleted || pushedOnce(t, cs) != 20 {
		t.Fatalf("after resume: %s %v", r.Phase, err)
	}
}

func TestAbortRollsBack(t *testing.T) {
	f, cs := newFleet(t, 6)
	ctx := context.Background()
	// edge-001 had a document of its own before; the others had none.
	prev := []byte(`{"version":1,"dns":{}}`)
	if _, err := cs.WriteCAS(ctx, layout.HostDoc("edge-001", "20-dns.json"), prev, 0); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	start(t, cs, testSpec(t, gated), clock)
	c := newController(cs, clock, "c1")
	for range 20 { // the canary confirms; the gate waits
		c.Step(ctx)
		f.react()
		clock.advance(time.Minute)
	}
	if _, err := Approve(ctx, cs, layout, "dns-v3"); err != nil {
		t.Fatal(err)
	}
	for range 6 { // a few hosts of the rest pushed
		c.Step(ctx)
		f.react()
	}
	if _, err := Abort(ctx, cs, layout, "dns-v3"); err != nil {
		t.Fatal(err)
	}
	r, err := drive(t, c, f, clock)
	if err != nil || r.Phase != PhaseAborted {
		t.Fatalf("phase %s, err %v", r.Phase, err)
	}
	s := load(t, cs)
	rolled := 0
	for h, hs := range s.Hosts {
		e, err := cs.Read(ctx, layout.HostDoc(h, "20-dns.json"))
		switch {
		case hs.State == HostSkipped:
			continue
		case hs.State != HostRolledBack:
			t.Errorf("%s: %s", h, hs.State)
		case h == "edge-001" && (err != nil || string(e.Value) != string(prev)):
			t.Errorf("edge-001: %q %v, want its previous document", e.Value, err)
		case h != "edge-001" && err == nil:
			t.Errorf("%s: still has %q", h, e.Value)
		}
		rolled++
	}
	if rolled < 2 {
		t.Errorf("%d hosts rolled back", rolled)
	}
}

// TestWaveByLabel: a wave selects the hosts whose status has its labels;
// a status with an invalid label is chosen by percent only.
func TestWaveByLabel(t *testing.T) {
	f, cs := newFleet(t, 10)
	for _, h := range []string{"edge-003", "edge-007", "edge-008"} {
		f.labels[h] = map[string]string{"site": "fra-1", "tier": "canary"}
	}
	f.labels["edge-009"] = map[string]string{"site": "fra-1", "bad key": "x"}
	f.labels["edge-001"] = map[string]string{"site": "fra-1"} // lacks tier
	for _, h := range f.hosts {
		f.write(h, fleet.Status{Host: h, Ready: true, Revisions: map[string]int64{"groups/edge/base.json": 1}})
	}
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	start(t, cs, testSpec(t, `{"rollout": "dns-v3", "document": "groups/edge/20-dns.json", "intent": "x.json", "waves": [
 {"name": "canary", "labels": {"site": "fra-1", "tier": "canary"}, "bake": "1m"},
 {"name": "rest", "percent": 100}]}`), clock)
	r, err := drive(t, newController(cs, clock, "c1"), f, clock)
	if err != nil || r.Phase != PhaseCompleted {
		t.Fatalf("phase %s, err %v", r.Phase, err)
	}
	s := load(t, cs)
	got := slices.Sorted(slices.Values(s.Waves[0].Hosts))
	if !slices.Equal(got, []string{"edge-003", "edge-007", "edge-008"}) {
		t.Errorf("canary wave %v, want the three labelled hosts", got)
	}
	if len(s.Waves[1].Hosts) != 7 || pushedOnce(t, cs) != 10 {
		t.Errorf("rest wave %v", s.Waves[1].Hosts)
	}
}

// TestStoreOutageIsNotAFailure: a confirmed host that shows the store
// unreachable (not Ready, Degraded IntentSourceUnreachable) during the
// bake does not count as failed; one not Ready for another reason does.
func TestStoreOutageIsNotAFailure(t *testing.T) {
	f, cs, clock := started(t, 2, `{"rollout": "dns-v3", "document": "20-dns.json", "intent": "x.json", "waves": [
 {"name": "canary", "hosts": ["edge-000"], "bake": "10m"}, {"name": "rest", "percent": 100}]}`)
	c := newController(cs, clock, "c1")
	ctx := context.Background()
	for range 10 {
		c.Step(ctx)
		f.react()
	}
	if s := load(t, cs); s.Hosts["edge-000"] == nil || s.Hosts["edge-000"].State != HostConfirmed {
		t.Fatalf("canary not confirmed: %+v", s.Hosts)
	}
	se, _ := cs.Read(ctx, layout.Status("edge-000"))
	var st fleet.Status
	json.Unmarshal(se.Value, &st)
	st.Ready, st.Degraded = false, true
	st.Conditions = []fleet.Condition{{Type: "Degraded", Status: true, Reason: "IntentSourceUnreachable"}}
	f.write("edge-000", st)
	for range 5 {
		if r, err := c.Step(ctx); err != nil || r.Phase != PhaseRunning {
			t.Fatalf("during the store's outage: %s %v", r.Phase, err)
		}
		clock.advance(time.Minute)
	}
	st.Conditions = []fleet.Condition{{Type: "Degraded", Status: true, Reason: "ItemsFailed"}}
	f.write("edge-000", st)
	if r, err := c.Step(ctx); err != nil || r.Phase != PhaseHalted {
		t.Fatalf("not Ready for the document: %s %v", r.Phase, err)
	}
}
