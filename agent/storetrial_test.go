package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/agent/probe"
	"github.com/netagent/netagent/agent/source"
	"github.com/netagent/netagent/agent/trial"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/internal/memstore"
	"github.com/netagent/netagent/store"
)

// The fleet trial tests: a trial envelope pushed to h1's group, confirmed
// or reverted by a fake prober, over a fake kernel.

// fleetProber answers every probe round with err; it counts the rounds.
type fleetProber struct {
	mu     sync.Mutex
	err    error
	rounds int
	block  bool // a round lasts until its deadline
	// failBefore are the probes its pre-check finds failing.
	failBefore []string
	prechecks  int
	specs      []string // of the last round
	// run, when set, runs each round instead of err and block.
	run func(ctx context.Context, specs []string) error
}

func (p *fleetProber) lastSpecs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.specs
}

// preCheck is the source's pre-check: the probes in failBefore fail.
func (p *fleetProber) preCheck(_ context.Context, specs []string) (counted []string, failing []trial.Failing) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prechecks++
	for _, s := range specs {
		if slices.Contains(p.failBefore, s) {
			failing = append(failing, trial.Failing{Probe: s, Err: fmt.Errorf("probe %s: %w: no reply", s, probe.ErrFailed)})
			continue
		}
		counted = append(counted, s)
	}
	return counted, failing
}

func (p *fleetProber) probe(ctx context.Context, specs []string) error {
	p.mu.Lock()
	p.rounds++
	p.specs = specs
	err, block, run := p.err, p.block, p.run
	p.mu.Unlock()
	if run != nil {
		return run(ctx, specs)
	}
	if block {
		<-ctx.Done()
		return ctx.Err()
	}
	return err
}

func (p *fleetProber) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rounds
}

// fleetTrialRig is a fleetRig whose status writer stops with stopWriter (as
// the daemon's stops with it: a restarted agent's status is the new one's).
type fleetTrialRig struct {
	*fleetRig
	stopWriter func()
	trials     *fakeTrials // the target's trials: the journal
}

// newFleetTrialRig is newFleetRig with a prober and a state directory for the
// source (dir, shared with the agent's).
func newFleetTrialRig(t *testing.T, m *memstore.Store, dir string, p *fleetProber) *fleetTrialRig {
	t.Helper()
	f := &fleetTrialRig{fleetRig: &fleetRig{m: m}, trials: &fakeTrials{}}
	setup := func(c *Config) {
		c.StateDir = dir
		c.Trials = f.trials
		var err error
		f.src, err = member.NewStoreSource(member.StoreSourceConfig{Store: m, Layout: testLayout, Host: "h1", Groups: []string{"g1"},
			Log: c.Log, Prober: p.probe, PreCheck: p.preCheck, StateDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		f.w, err = member.NewStatusWriter(member.StatusWriterConfig{Store: m, Layout: testLayout, Host: "h1", Log: c.Log, TTL: testTTL, Source: f.src})
		if err != nil {
			t.Fatal(err)
		}
		c.Sources = []source.IntentSource{f.src}
		c.Report = f.w.Report
	}
	f.rig = newRig(t, nil, setup)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.w.Run(ctx) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	f.stopWriter = stop
	return f
}

// trialDoc is a trial envelope of intent.
func trialDoc(t *testing.T, timeout string, intent string, probes ...string) string {
	t.Helper()
	raw, err := json.Marshal(member.TrialEnvelope{Trial: member.TrialSpec{Timeout: timeout, Probes: probes}, Intent: json.RawMessage(intent)})
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func (f *fleetRig) trial(t *testing.T) *fleet.Trial {
	t.Helper()
	st, ok := f.fleetStatus(t)
	if !ok {
		t.Fatal("no status in the store")
	}
	return st.Trial
}

var groupRoutes = testLayout.GroupDoc("g1", "routes.json")

// fleetTrialsFile is where the store source of releases before the state
// directory's store kept the fleet trials (package member).
const fleetTrialsFile = "fleet-trials.json"

// TestFleetTrialConfirmed: a trial whose probes pass is applied, confirmed
// and stays.
func TestFleetTrialConfirmed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := memstore.New()
		m.Put(testLayout.HostDoc("h1", "uplink.json"), uplinkDoc)
		m.Put(groupRoutes, routeDoc)
		p := &fleetProber{}
		f := newFleetTrialRig(t, m, t.TempDir(), p)
		f.start()
		settle()
		rev := m.Put(groupRoutes, trialDoc(t, "30s", twoRoutesDoc, "ping:192.0.2.1"))
		settle()
		settle()
		if !f.k.has(route2Ref) || !f.k.has(routeRef) {
			t.Fatalf("the trial was not applied: %v", f.k.takeOps())
		}
		// Its first probe round passed: it stands, its probes watched,
		// until its deadline, when it is confirmed.
		if tr := f.trial(t); tr == nil || tr.Revision != int64(rev) || tr.State != member.FleetTrialPending {
			t.Fatalf("trial in the status after its first probe round %+v, want pending", tr)
		}
		time.Sleep(30 * time.Second)
		settle()
		want := fleet.Trial{Source: "groups/g1/routes.json", Revision: int64(rev), State: member.FleetTrialConfirmed}
		if tr := f.trial(t); tr == nil || tr.Source != want.Source || tr.Revision != want.Revision || tr.State != want.State {
			t.Fatalf("trial in the status %+v, want %+v", tr, want)
		}
		rounds := p.count()
		if rounds < 20 {
			t.Errorf("probe runs through the trial window: %d, want one a second", rounds)
		}
		time.Sleep(time.Minute) // past the timeout: nothing reverts, nothing is probed (no bake)
		synctest.Wait()
		if !f.k.has(route2Ref) || p.count() != rounds {
			t.Errorf("after the timeout: route2 applied %v, probe rounds %d (were %d)", f.k.has(route2Ref), p.count(), rounds)
		}
		if st, _ := f.fleetStatus(t); !st.Ready || st.Revisions["groups/g1/routes.json"] != int64(rev) {
			t.Errorf("status after the confirm: %+v", st)
		}
	})
}

// TestFleetTrialReverted: a trial whose probe fails reverts to the
// previous document, says why, and is not tried again until the key
// changes, not even after a restart; a plain push then applies.
func TestFleetTrialReverted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, p, dir := memstore.New(), failingProber(), t.TempDir()
		f, rev := startFailingTrial(t, m, dir, p)
		if f.k.has(route2Ref) || !f.k.has(routeRef) {
			t.Fatalf("the failed trial was not reverted to the previous document: %v", f.k.takeOps())
		}
		tr := f.trial(t)
		if tr == nil || tr.State != member.FleetTrialReverted || tr.Revision != int64(rev) || !strings.Contains(tr.Reason, "no reply") {
			t.Fatalf("trial in the status %+v, want reverted with the probe's error", tr)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if f.k.has(route2Ref) || p.count() != 1 {
			t.Errorf("the reverted trial was tried again: route2 %v, probe rounds %d", f.k.has(route2Ref), p.count())
		}
		f.stop()
		f.stopWriter()
		g := newFleetTrialRig(t, m, dir, p)
		g.start()
		settle()
		settle()
		if g.k.has(route2Ref) || !g.k.has(routeRef) || p.count() != 1 {
			t.Fatalf("a restart tried the reverted trial again: route2 %v, probe rounds %d", g.k.has(route2Ref), p.count())
		}
		if tr := g.trial(t); tr == nil || tr.State != member.FleetTrialReverted || tr.Revision != int64(rev) {
			t.Errorf("trial after the restart %+v", tr)
		}
		m.Put(groupRoutes, twoRoutesDoc)
		settle()
		if !g.k.has(route2Ref) {
			t.Fatalf("a plain push after the reverted trial was not applied: %v", g.k.takeOps())
		}
		if st, _ := g.fleetStatus(t); st.Trial != nil || !st.Ready {
			t.Errorf("status after the plain push: %+v", st)
		}
	})
}

// TestFleetTrialTimeoutAndRestart: a trial the agent cannot converge to
// (its document is refused) reverts at its timeout; a trial pending when
// the agent stops counts as reverted at the next start.
func TestFleetTrialTimeoutAndRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := memstore.New()
		m.Put(testLayout.HostDoc("h1", "uplink.json"), uplinkDoc)
		m.Put(groupRoutes, routeDoc)
		p := &fleetProber{}
		dir := t.TempDir()
		f := newFleetTrialRig(t, m, dir, p)
		f.start()
		settle()
		m.Put(groupRoutes, trialDoc(t, "10s", brokenDoc))
		settle()
		if tr := f.trial(t); tr == nil || tr.State != member.FleetTrialPending {
			t.Fatalf("trial %+v, want pending", tr)
		}
		time.Sleep(11 * time.Second)
		synctest.Wait()
		settle()
		if tr := f.trial(t); tr == nil || tr.State != member.FleetTrialReverted || !strings.Contains(tr.Reason, "timeout") {
			t.Fatalf("trial %+v, want reverted at its timeout", tr)
		}
		if !f.k.has(routeRef) || p.count() != 0 {
			t.Errorf("after the timeout: route %v, probe rounds %d", f.k.has(routeRef), p.count())
		}
		// Pending when the agent stops: reverted at the next start.
		p.mu.Lock()
		p.block = true // the probes never end before the deadline
		p.mu.Unlock()
		rev := m.Put(groupRoutes, trialDoc(t, "10m", strings.Replace(twoRoutesDoc, "\"version\": 1", "\"version\": 1 ", 1), "ping:192.0.2.9"))
		settle()
		if tr := f.trial(t); tr == nil || tr.State != member.FleetTrialPending || tr.Revision != int64(rev) {
			t.Fatalf("trial %+v, want pending", tr)
		}
		f.stop()
		f.stopWriter()
		g := newFleetTrialRig(t, m, dir, p)
		g.start()
		settle()
		if tr := g.trial(t); tr == nil || tr.State != member.FleetTrialReverted || !strings.Contains(tr.Reason, "restarted") {
			t.Fatalf("trial after the restart %+v, want reverted", tr)
		}
		if g.k.has(route2Ref) || !g.k.has(routeRef) {
			t.Errorf("the restart applied the interrupted trial: %v", g.k.takeOps())
		}
	})
}

// TestFleetTrialDeleted: a document deleted while its trial is pending
// ends the trial (no revert reported later), and a trial of a new
// document of that name has no previous version: its revert withdraws it.
func TestFleetTrialDeleted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := memstore.New()
		m.Put(testLayout.HostDoc("h1", "uplink.json"), uplinkDoc)
		m.Put(groupRoutes, routeDoc)
		p := &fleetProber{block: true}
		f := newFleetTrialRig(t, m, t.TempDir(), p)
		f.start()
		settle()
		m.Put(groupRoutes, trialDoc(t, "10s", twoRoutesDoc, "ping:192.0.2.1"))
		settle()
		if tr := f.trial(t); tr == nil || tr.State != member.FleetTrialPending {
			t.Fatalf("trial %+v, want pending", tr)
		}
		m.Del(groupRoutes)
		settle()
		time.Sleep(11 * time.Second)
		synctest.Wait()
		settle()
		if tr := f.trial(t); tr != nil {
			t.Errorf("trial of a deleted document: %+v", tr)
		}
		if f.k.has(routeRef) || f.k.has(route2Ref) {
			t.Errorf("the deleted document stays applied: %v", f.k.takeOps())
		}
		p.mu.Lock()
		p.block, p.err = false, errors.New("no reply")
		p.mu.Unlock()
		m.Put(groupRoutes, trialDoc(t, "10s", twoRoutesDoc, "ping:192.0.2.1"))
		settle()
		settle()
		if tr := f.trial(t); tr == nil || tr.State != member.FleetTrialReverted {
			t.Fatalf("trial %+v, want reverted", tr)
		}
		if f.k.has(routeRef) || f.k.has(route2Ref) {
			t.Errorf("the reverted trial of a new document stays applied: %v", f.k.takeOps())
		}
	})
}

// TestFleetTrialJournal: a fleet trial's changes are journaled as a
// socket trial's are: the target trial begins before the trial's intent
// is applied, with the documents before it as Previous; a revert puts the
// kernel back from the journal, then reconciles to the previous document;
// a confirm drops the journal. The trials live in the state directory's
// store, not in a side file: a fleet-trials.json of a release before is
// read once and moved there.
func TestFleetTrialJournal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, p, dir := memstore.New(), failingProber(), t.TempDir()
		f, _ := startFailingTrial(t, m, dir, p)
		if got := strings.Join(f.trials.events, ","); got != "begin,revert" {
			t.Fatalf("journal events %q, want begin,revert", got)
		}
		begun := f.trials.begun[0]
		if string(begun.Previous["groups/g1/routes.json"]) != routeDoc || !strings.Contains(string(begun.Files["groups/g1/routes.json"]), "203.0.113.0/24") ||
			begun.Previous["hosts/h1/uplink.json"] == nil || len(begun.Probes) != 1 || begun.Deadline.IsZero() {
			t.Errorf("the journal began with %+v", begun)
		}
		if f.k.has(route2Ref) || !f.k.has(routeRef) {
			t.Fatalf("not reverted to the previous document: %v", f.k.takeOps())
		}
		if _, err := os.Stat(filepath.Join(dir, fleetTrialsFile)); !os.IsNotExist(err) {
			t.Errorf("a side file: %v", err)
		}

		p.mu.Lock()
		p.err = nil
		p.mu.Unlock()
		m.Put(groupRoutes, trialDoc(t, "30s", twoRoutesDoc, "ping:192.0.2.2"))
		settle()
		settle()
		time.Sleep(30 * time.Second) // confirmed at its deadline
		settle()
		if got := strings.Join(f.trials.events, ","); got != "begin,revert,begin,confirm" || !f.k.has(route2Ref) {
			t.Fatalf("journal events %q, want begin,revert,begin,confirm; route2 %v", got, f.k.has(route2Ref))
		}
	})
}

// TestFleetTrialsMovedIntoStore: the fleet-trials.json of a release
// before is read (a pending trial in it counts as reverted, its revert
// target delivered) and moved into the state directory's store.
func TestFleetTrialsMovedIntoStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := memstore.New()
		m.Put(testLayout.HostDoc("h1", "uplink.json"), uplinkDoc)
		doc := trialDoc(t, "30s", twoRoutesDoc, "ping:192.0.2.1")
		env, _, _ := member.ParseTrialEnvelope([]byte(doc))
		rev := m.Put(groupRoutes, doc)
		dir := t.TempDir()
		old, _ := json.Marshal(map[string]any{"trials": map[string]any{"groups/g1/routes.json": map[string]any{
			"revision": int64(rev), "state": member.FleetTrialPending, "previous": []byte(routeDoc), "hasPrevious": true, "intent": []byte(env.Intent)}}})
		if err := os.WriteFile(filepath.Join(dir, fleetTrialsFile), old, 0o600); err != nil {
			t.Fatal(err)
		}
		f := newFleetTrialRig(t, m, dir, &fleetProber{})
		f.start()
		settle()
		if f.k.has(route2Ref) || !f.k.has(routeRef) {
			t.Fatalf("the trial pending at the stop was not reverted to its previous document: %v", f.k.takeOps())
		}
		if tr := f.trial(t); tr == nil || tr.State != member.FleetTrialReverted || tr.Revision != int64(rev) {
			t.Fatalf("trial %+v", tr)
		}
		if _, err := os.Stat(filepath.Join(dir, fleetTrialsFile)); !os.IsNotExist(err) {
			t.Errorf("fleet-trials.json still there: %v", err)
		}
		f.stop()
		f.stopWriter()
		g := newFleetTrialRig(t, m, dir, &fleetProber{})
		g.start()
		settle()
		if g.k.has(route2Ref) || !g.k.has(routeRef) {
			t.Fatalf("after a restart without fleet-trials.json: %v", g.k.takeOps())
		}
	})
}

// failingProber is a prober whose every round fails.
func failingProber() *fleetProber {
	return &fleetProber{err: errors.New("ping 192.0.2.1: no reply")}
}

// startFailingTrial starts an agent on m holding the uplink and one route,
// pushes a trial of two routes probed by p, and returns once the trial ran;
// rev is the trial's revision.
func startFailingTrial(t *testing.T, m *memstore.Store, dir string, p *fleetProber) (f *fleetTrialRig, rev store.Version) {
	t.Helper()
	m.Put(testLayout.HostDoc("h1", "uplink.json"), uplinkDoc)
	m.Put(groupRoutes, routeDoc)
	f = newFleetTrialRig(t, m, dir, p)
	f.start()
	settle()
	rev = m.Put(groupRoutes, trialDoc(t, "30s", twoRoutesDoc, "ping:192.0.2.1"))
	settle()
	settle()
	return f, rev
}
