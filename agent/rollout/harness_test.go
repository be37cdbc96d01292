package rollout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/local"
)

var layout = fleet.Layout{Prefix: "/t"}

const testIntent = `{"version":1}`

type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

var errKilled = errors.New("controller killed after this write")

// countStore counts the envelopes written to each host key, and fails
// ("kills the controller") right after write number killAt.
type countStore struct {
	store.Store
	mu     sync.Mutex
	pushes map[string]int
	writes int
	killAt int
}

func (s *countStore) wrote() error {
	s.writes++
	if s.killAt > 0 && s.writes == s.killAt {
		return errKilled
	}
	return nil
}

func (s *countStore) WriteCAS(ctx context.Context, key string, value []byte, expect store.Version) (store.Version, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.Store.WriteCAS(ctx, key, value, expect)
	if err != nil {
		return v, err
	}
	if strings.HasPrefix(key, layout.Hosts()+"/") && strings.Contains(string(value), `"trial"`) {
		s.pushes[key]++
	}
	return v, s.wrote()
}

func (s *countStore) DeleteCAS(ctx context.Context, key string, expect store.Version) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.Store.DeleteCAS(ctx, key, expect); err != nil {
		return err
	}
	return s.wrote()
}

// fleetFake is n hosts that act as members do: each reports a trial
// pushed to its key as confirmed, or reverted when it is in fail, and
// stays not Ready after confirming when it is in sick.
type fleetFake struct {
	t          *testing.T
	st         store.Store
	hosts      []string
	fail, sick map[string]bool
	// bakeFails are hosts that confirm, then report a probe failing in
	// the bake (Degraded, fleet.Trial.BakeProbe), as members do.
	bakeFails map[string]bool
	labels    map[string]map[string]string
}

func newFleet(t *testing.T, n int) (*fleetFake, *countStore) {
	t.Helper()
	ls, err := local.Open(t.TempDir(), local.Options{NoFSNotify: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ls.Close() })
	f := &fleetFake{t: t, st: ls, fail: map[string]bool{}, sick: map[string]bool{}, bakeFails: map[string]bool{}, labels: map[string]map[string]string{}}
	for i := range n {
		f.hosts = append(f.hosts, fmt.Sprintf("edge-%03d", i))
	}
	for _, h := range f.hosts {
		f.write(h, fleet.Status{Host: h, Ready: true, Revisions: map[string]int64{"groups/edge/base.json": 1}})
	}
	return f, &countStore{Store: ls, pushes: map[string]int{}}
}

func (f *fleetFake) write(host string, st fleet.Status) {
	f.t.Helper()
	st.Labels = f.labels[host]
	raw, _ := json.Marshal(st)
	key := layout.Status(host)
	cur, err := f.st.Read(context.Background(), key)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		f.t.Fatal(err)
	}
	if _, err := f.st.WriteCAS(context.Background(), key, raw, cur.Version); err != nil {
		f.t.Fatal(err)
	}
}

// react reports the trials pushed since the last call.
func (f *fleetFake) react() {
	f.t.Helper()
	ctx := context.Background()
	for _, h := range f.hosts {
		e, err := f.st.Read(ctx, layout.HostDoc(h, "20-dns.json"))
		if err != nil {
			continue
		}
		if _, _, err := member.ParseTrialEnvelope(e.Value); err != nil {
			continue
		}
		se, _ := f.st.Read(ctx, layout.Status(h))
		var st fleet.Status
		json.Unmarshal(se.Value, &st)
		if st.Trial != nil && st.Trial.Revision == int64(e.Version) {
			continue
		}
		st.Trial = &fleet.Trial{Source: "hosts/" + h + "/20-dns.json", Revision: int64(e.Version), State: member.FleetTrialConfirmed}
		if f.fail[h] {
			st.Trial.State, st.Trial.Reason = member.FleetTrialReverted, "probe ping:192.0.2.1 failed"
		}
		st.Ready = !f.sick[h]
		if f.bakeFails[h] {
			st.Degraded, st.Trial.BakeProbe, st.Trial.BakeFailure = true, "ping:192.0.2.1", "probe ping:192.0.2.1 failed 3 times in a row after the change: no reply"
		}
		f.write(h, st)
	}
}

func testSpec(t *testing.T, raw string) *Spec {
	t.Helper()
	s, err := ParseSpec([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const threeWaves = `{"rollout": "dns-v3", "document": "groups/edge/20-dns.json", "intent": "dns-v3.json", "waves": [
 {"name": "canary", "hosts": ["edge-001", "edge-002"], "trialTimeout": "2m", "probes": ["ping:192.0.2.1"], "bake": "10m", "failureTolerance": 0},
 {"name": "quarter", "percent": 25, "concurrency": 2, "failureTolerance": "10%", "bake": "30m"},
 {"name": "rest", "percent": 100, "concurrency": 5, "failureTolerance": 1}]}`

func newController(st store.Store, clock Clock, owner string) *Controller {
	return &Controller{Store: st, Layout: layout, ID: "dns-v3", Owner: owner, Clock: clock}
}

// drive steps c (the members reacting after every step, the clock
// moving 10s when a step wrote nothing) until the rollout stops or a
// step fails; it returns the last result and error.
func drive(t *testing.T, c *Controller, f *fleetFake, clock *fakeClock) (Result, error) {
	t.Helper()
	for range 10000 {
		r, err := c.Step(context.Background())
		f.react()
		if err != nil || r.Final() {
			return r, err
		}
		if !r.Wrote {
			clock.advance(10 * time.Second)
		}
	}
	t.Fatal("the rollout did not end in 10000 steps")
	return Result{}, nil
}

func start(t *testing.T, st store.Store, spec *Spec, clock *fakeClock) {
	t.Helper()
	if _, err := Start(context.Background(), st, layout, spec, []byte(testIntent), clock.Now()); err != nil {
		t.Fatal(err)
	}
}

func load(t *testing.T, st store.Store) *State {
	t.Helper()
	s, _, err := Load(context.Background(), st, layout, "dns-v3")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// started is a fleet of n hosts and the rollout spec started on it.
func started(t *testing.T, n int, spec string) (*fleetFake, *countStore, *fakeClock) {
	t.Helper()
	f, cs := newFleet(t, n)
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	start(t, cs, testSpec(t, spec), clock)
	return f, cs, clock
}
