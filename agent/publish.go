package agent

// What the loop hands out at the end of a turn. The status stream
// (`netagent status --watch`, agent/api): the changes of its status, only
// while someone watches, into the hub (api.Hub), which never waits for a
// client. The metrics (agent/metrics): counters after each reconcile and
// drift check, gauges from the loop's state.

import (
	"context"
	"strings"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/metrics"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/reconciler"
)

// publishEvents publishes what changed in the status since the last turn,
// in the loop, while someone watches.
func (a *Agent) publishEvents() {
	if a.ev.Count() == 0 {
		a.evLast = nil
		return
	}
	a.snapshotEvents()
}

// snapshotEvents builds the status, publishes its changes since the last
// one (if any) and keeps it as the last.
func (a *Agent) snapshotEvents() status.Status {
	st := a.status()
	cur := api.SnapshotOf(&st)
	if a.evLast != nil {
		a.ev.Publish(api.EventsBetween(a.evLast, cur, &st, time.Now()))
	}
	a.evLast = cur
	return st
}

// startWatch answers a CmdWatch in the loop: it publishes what changed to
// the others, then adds the call's subscriber, whose events are the
// changes from the status it is answered with. One without a subscriber
// (not from watchCall) is refused.
func (a *Agent) startWatch(c call) api.Response {
	if c.sub == nil {
		return api.Response{Error: "watch streams events: use the socket (netagent status --watch) or Agent.Subscribe"}
	}
	st := a.snapshotEvents()
	a.ev.Add(c.sub)
	return api.Response{Status: &st}
}

// watchCall hands a CmdWatch with its subscriber to the loop and waits for
// the status it starts from.
func (a *Agent) watchCall(ctx context.Context, s *api.Subscriber) (api.Response, error) {
	return a.send(ctx, call{req: api.Request{Command: api.CmdWatch}, reply: make(chan api.Response, 1), sub: s})
}

// Subscribe streams the agent's events to f, starting with an EventStatus,
// until ctx ends, the agent stops or f fails (api.Handler: the socket
// server streams them to a client).
func (a *Agent) Subscribe(ctx context.Context, f func(api.Event) error) error {
	s := api.NewSubscriber(api.WatchBuffer)
	defer a.ev.Remove(s)
	resp, err := a.watchCall(ctx, s)
	if err != nil {
		return err
	}
	if err := f(api.StatusEvent(resp.Status, time.Now())); err != nil {
		return err
	}
	return a.ev.Stream(ctx, s, a.done, f)
}

// metricsFeed feeds the agent's metrics (package agent/metrics) from the
// loop: the counters after each reconcile and drift check, the gauges
// after each turn of the loop. The loop owns it.
type metricsFeed struct {
	m *metrics.Metrics
	// items counts the items by state as of the last reconcile; stale: a
	// drift check may have changed the states since (items held as not
	// converging, or released), so the next publish counts again.
	items         map[string]int
	stale         bool
	blocked       int
	lastRun       time.Time
	lastConverged time.Time
}

func newMetricsFeed() *metricsFeed {
	return &metricsFeed{m: metrics.New(), items: status.ZeroStates()}
}

// Metrics returns the agent's metrics: serve them with their Handler
// (`netagent run --metrics-listen`), or Register more collectors before
// Run. The socket's CmdMetrics answers with them too.
func (a *Agent) Metrics() *metrics.Metrics { return a.mx.m }

// metricsAfterReconcile counts a reconcile and its operations, and takes
// the item counts from the tallies the conditions were computed from.
func (a *Agent) metricsAfterReconcile(reasons []string, start, end time.Time, st reconciler.Status, t status.Tallies) {
	s, f := a.st, a.mx
	f.m.ObserveReconcile(reasons, start, end, st.OperationLog)
	s.leases.CountUnusable(st.OperationLog)
	f.items, f.stale = t.ByState(), false
	f.blocked = s.results.blocked(s.current, s.intended)
	f.lastRun = end
	if st.Err == nil && status.Converged(f.items) {
		f.lastConverged = end
	}
}

// metricsAfterDrift counts what a drift check found.
func (a *Agent) metricsAfterDrift(found []metrics.Finding, kept int) {
	a.mx.m.ObserveDrift(found)
	if len(found) > 0 || kept > 0 {
		a.mx.stale = true
	}
}

// publishMetrics sets the gauges from the loop's state; the loop calls it
// after every turn. Counting the items again (a pass over them all) only
// happens after a drift check that changed something and no reconcile.
func (a *Agent) publishMetrics() {
	s, f := a.st, a.mx
	if f.stale {
		f.items, f.stale = status.ItemCounts(a.snapshot()), false
	}
	snap := metrics.Snapshot{Items: f.items, Blocked: f.blocked, LastReconcile: f.lastRun, LastConverged: f.lastConverged,
		Trial: metrics.TrialNone}
	if v := a.hist.current; v != nil {
		snap.Version = v.Number
	}
	if t := s.trial; t != nil {
		snap.Trial, snap.TrialDeadline = metrics.TrialPending, t.status.Deadline
	}
	if o := s.lastTrial; o != nil {
		snap.LastTrial = &metrics.TrialEnd{Result: o.Result, At: o.At}
	}
	for _, r := range status.LeaseRefusals(a.refusals) {
		snap.LeasesRefused = append(snap.LeasesRefused, metrics.LeaseRefused{Interface: r.Interface, Family: r.Family})
	}
	f.m.Publish(snap)
}

// metricsResponse answers CmdMetrics.
func (a *Agent) metricsResponse() api.Response {
	var b strings.Builder
	if err := a.mx.m.WriteText(&b); err != nil {
		return api.Response{Error: "gathering the metrics: " + err.Error(), Metrics: b.String()}
	}
	return api.Response{Metrics: b.String()}
}
