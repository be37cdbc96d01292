package rollout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/metrics"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store"
)

// Supervisor is a long-running controller (`netagent fleet controller`):
// every Poll it looks for the rollouts whose state says running or
// aborting and runs a Controller for each one it is not running yet,
// under the rollout's lease (a rollout another controller holds is tried
// again at the next look). Every controller shares one StatusWatch.
// Metrics, if set, gets every rollout's host counts after each step and
// counts the halts it sees.
type Supervisor struct {
	Store  store.Store
	Layout fleet.Layout
	Owner  string
	Clock  Clock
	// Poll is how often it looks for rollouts and how long a controller
	// waits between steps that changed nothing (less on a status change).
	Poll    time.Duration
	Sleep   func(context.Context, time.Duration) error
	Log     logrus.FieldLogger
	Metrics *metrics.Rollouts
	// Preflight is every controller's (Controller.Preflight).
	Preflight *Preflight

	mu      sync.Mutex
	running map[string]bool
	phases  map[string]string // the last phase seen, by rollout
}

// Run supervises until ctx ends; then it waits for its controllers,
// which give their leases up, and returns nil.
func (v *Supervisor) Run(ctx context.Context) error {
	v.running, v.phases = map[string]bool{}, map[string]string{}
	watch := WatchStatuses(ctx, v.Store, v.Layout)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		ids, err := v.runnable(ctx)
		if err != nil && ctx.Err() == nil {
			v.Log.WithError(err).Warn("looking for rollouts to run")
		}
		for _, id := range ids {
			v.mu.Lock()
			busy := v.running[id]
			v.running[id] = true
			v.mu.Unlock()
			if busy {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				v.runOne(ctx, id, watch)
				v.mu.Lock()
				delete(v.running, id)
				v.mu.Unlock()
			}()
		}
		if err := v.Sleep(ctx, v.Poll); err != nil {
			return nil
		}
	}
}

// runnable lists the rollouts whose state is running or aborting (the
// state keys only, not the hosts' records).
func (v *Supervisor) runnable(ctx context.Context) ([]string, error) {
	keys, _, err := v.Store.ListKeys(ctx, v.Layout.Rollouts())
	if err != nil {
		return nil, fmt.Errorf("listing rollouts: %w", err)
	}
	var out []string
	for _, k := range keys {
		id, ok := strings.CutSuffix(strings.TrimPrefix(k.Key, v.Layout.Rollouts()+"/"), "/state")
		if !ok || strings.Contains(id, "/") {
			continue
		}
		s, _, err := loadState(ctx, v.Store, v.Layout, id)
		if err != nil {
			if !errors.Is(err, ErrNoRollout) {
				v.Log.WithError(err).WithField("rollout", id).Warn("reading a rollout")
			}
			continue
		}
		if s.Phase == PhaseRunning || s.Phase == PhaseAborting {
			out = append(out, id)
		}
	}
	return out, nil
}

// runOne runs rollout id's controller until it stops, ctx ends, or it
// fails (logged; the next look tries again).
func (v *Supervisor) runOne(ctx context.Context, id string, watch *StatusWatch) {
	c := &Controller{Store: v.Store, Layout: v.Layout, ID: id, Owner: v.Owner, Clock: v.Clock, Watch: watch, Preflight: v.Preflight}
	log := v.Log.WithField("rollout", id)
	r, err := c.Run(ctx, v.Poll, v.Sleep, func(r Result) { v.observe(id, r) })
	rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	if rerr := c.Release(rctx); rerr != nil {
		log.WithError(rerr).Warn("releasing the rollout's lease; it expires by itself")
	}
	cancel()
	switch {
	case ctx.Err() != nil:
	case errors.Is(err, ErrLeaseHeld):
		log.WithError(err).Debug("another controller runs it")
	case err != nil:
		log.WithError(err).Warn("the rollout's controller stopped; trying again at the next look")
	default:
		log.WithField("phase", r.Phase).Info("the rollout stopped")
	}
}

// observe updates the metrics after a step of rollout id.
func (v *Supervisor) observe(id string, r Result) {
	if r.State == nil {
		return
	}
	v.mu.Lock()
	prev := v.phases[id]
	v.phases[id] = r.Phase
	v.mu.Unlock()
	if prev != r.Phase {
		v.Log.WithFields(logrus.Fields{"rollout": id, "phase": r.Phase, "reason": r.State.Reason}).Info("rollout phase")
	}
	if v.Metrics == nil {
		return
	}
	v.Metrics.Known(id)
	if r.Phase == PhaseHalted && prev != "" && prev != PhaseHalted {
		v.Metrics.Halted(id)
	}
	v.Metrics.SetHosts(id, MetricRows(Summarize(r.State, v.Clock.Now())))
}

// MetricRows are a summary's rows of netagent_rollout_hosts: each started
// wave's hosts by state, and its not-ready hosts.
func MetricRows(s Summary) []metrics.WaveHosts {
	var out []metrics.WaveHosts
	for _, w := range s.Waves {
		if w.Counts == nil {
			continue // not started
		}
		for _, st := range summaryStates {
			out = append(out, metrics.WaveHosts{Wave: w.Name, State: st, Hosts: w.Counts[st]})
		}
		out = append(out, metrics.WaveHosts{Wave: w.Name, State: "not-ready", Hosts: w.NotReady})
	}
	return out
}
