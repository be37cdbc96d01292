package agent

import (
	"strings"
	"time"

	"github.com/netagent/netagent/agent/api"
	"github.com/netagent/netagent/agent/metrics"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/reconciler"
)

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
