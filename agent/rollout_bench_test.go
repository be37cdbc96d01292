package agent

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/rollout"
	"github.com/netagent/netagent/store"
)

// countingStore counts the writes made through it.
type countingStore struct {
	store.Store
	writes atomic.Int64
}

func (s *countingStore) WriteCAS(ctx context.Context, key string, value []byte, expect store.Version) (store.Version, error) {
	s.writes.Add(1)
	return s.Store.WriteCAS(ctx, key, value, expect)
}

func (s *countingStore) DeleteCAS(ctx context.Context, key string, expect store.Version) error {
	s.writes.Add(1)
	return s.Store.DeleteCAS(ctx, key, expect)
}

// BenchmarkFleetRollout: NETAGENT_ROLLOUT_AGENTS (default 1,000) agents
// (fake kernels, in this process, the members' own trial code) on one
// etcd, and a four-wave rollout (1 %, 10 % with concurrency 50, 50 % and
// 100 % with concurrency 200; no bake, trial timeout 60s, no probes) run
// by one in-process controller with a status watch. Each iteration is one
// rollout of a new document to every host. It reports the rollout's wall
// time, the time spent inside the controller's steps (its own work and
// etcd round trips: the overhead, everything else being the hosts'
// trials), the steps, and the etcd writes per host: the controller's and
// all (the members' status writes included).
func BenchmarkFleetRollout(b *testing.B) {
	agents := 1000
	if n, err := strconv.Atoi(os.Getenv("NETAGENT_ROLLOUT_AGENTS")); err == nil && n > 0 {
		agents = n
	}
	f := startBenchFleet(b, agents, 20)
	defer f.stop()
	ctx, pusher, clients, layout := f.ctx, f.clients[0], f.clients, f.layout

	cs := &countingStore{Store: clients[1]}
	var wall, inSteps time.Duration
	var steps int
	var controllerWrites, allWrites int64
	b.ResetTimer()
	for i := range b.N {
		id := fmt.Sprintf("r%d", i)
		spec, err := rollout.ParseSpec(fmt.Appendf(nil, `{"rollout": %q, "document": "30-%s.json", "intent": "x.json", "waves": [
			{"name": "canary", "percent": 1, "trialTimeout": "60s"},
			{"name": "ten", "percent": 10, "concurrency": 50, "trialTimeout": "60s", "failureTolerance": "1%%"},
			{"name": "half", "percent": 50, "concurrency": 200, "trialTimeout": "60s", "failureTolerance": "1%%"},
			{"name": "rest", "percent": 100, "concurrency": 200, "trialTimeout": "60s", "failureTolerance": "1%%"}]}`, id, id))
		if err != nil {
			b.Fatal(err)
		}
		intent := fmt.Appendf(nil, `{"version": 1, "routes": [{"to": "10.200.%d.0/24", "via": "192.0.2.1", "dev": "uplink0"}]}`, i%250)
		_, before, err := pusher.ListKeys(ctx, layout.Rollouts())
		if err != nil {
			b.Fatal(err)
		}
		w0 := cs.writes.Load()
		began := time.Now()
		if _, err := rollout.Start(ctx, cs, layout, spec, intent, began); err != nil {
			b.Fatal(err)
		}
		wctx, wcancel := context.WithCancel(ctx)
		c := &rollout.Controller{Store: cs, Layout: layout, ID: id, Owner: "bench", Clock: wallClockBench{},
			Watch: rollout.WatchStatuses(wctx, cs, layout)}
		for {
			t0 := time.Now()
			r, err := c.Step(ctx)
			inSteps += time.Since(t0)
			steps++
			if err != nil {
				b.Fatalf("step: %v", err)
			}
			if r.Final() {
				if r.Phase != rollout.PhaseCompleted {
					b.Fatalf("rollout %s: %s (%s)", id, r.Phase, r.State.Reason)
				}
				break
			}
			if !r.Wrote {
				select {
				case <-c.Watch.Changed():
				case <-time.After(50 * time.Millisecond):
				}
			}
		}
		wall += time.Since(began)
		wcancel()
		controllerWrites += cs.writes.Load() - w0
		_, after, err := pusher.ListKeys(ctx, layout.Rollouts())
		if err != nil {
			b.Fatal(err)
		}
		allWrites += int64(after - before)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(wall.Seconds()/n, "rollout-s")
	b.ReportMetric(inSteps.Seconds()/n, "in-steps-s")
	b.ReportMetric(float64(steps)/n, "steps")
	b.ReportMetric(float64(controllerWrites)/n/float64(agents), "controller-writes/host")
	b.ReportMetric(float64(allWrites)/n/float64(agents), "etcd-writes/host")
}

type wallClockBench struct{}

func (wallClockBench) Now() time.Time { return time.Now() }
