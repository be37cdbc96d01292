package metrics

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// gauges is a collector of the gauges of the last Snapshot, which it
// copies under its lock: a scrape reads one whole snapshot.
type gauges struct {
	items, blocked, version, lastRun, lastConverged, trial, deadline *prometheus.Desc
	leaseRefused                                                     *prometheus.Desc

	mu sync.Mutex
	s  Snapshot
}

func newGauges() *gauges {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, labels, nil)
	}
	return &gauges{
		items:         d("items", "Managed items by state.", "state"),
		blocked:       d("blocked_items", "Intended items that cannot be created now: they wait for another item."),
		version:       d("intent_version", "The current version of the intent (0: none)."),
		lastRun:       d("last_reconcile_timestamp_seconds", "When the last reconcile ended, in Unix time (0: none yet)."),
		lastConverged: d("last_converged_reconcile_timestamp_seconds", "When the last reconcile ended that left every item in place, in Unix time (0: none yet)."),
		trial:         d("trial_state", "1 for the state of the daemon's trial (none, pending), 0 for the others.", "state"),
		deadline:      d("trial_deadline_timestamp_seconds", "When the pending trial reverts unless confirmed, in Unix time (0: no trial pending)."),
		leaseRefused: d("lease_refused", "1 while the lease of the interface (family ipv4: DHCPv4, ipv6: DHCPv6) is refused in part or whole: "+
			"its address or routes would take over the intent's own networks.", "interface", "family"),
	}
}

func (g *gauges) set(s Snapshot) {
	s.Items = maps.Clone(s.Items)
	s.LeasesRefused = slices.Clone(s.LeasesRefused)
	g.mu.Lock()
	g.s = s
	g.mu.Unlock()
}

func (g *gauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{g.items, g.blocked, g.version, g.lastRun, g.lastConverged, g.trial, g.deadline, g.leaseRefused} {
		ch <- d
	}
}

func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	s := g.s
	g.mu.Unlock() // s.Items is never written after set
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, state := range slices.Sorted(maps.Keys(s.Items)) {
		gauge(g.items, float64(s.Items[state]), state)
	}
	gauge(g.blocked, float64(s.Blocked))
	gauge(g.version, float64(s.Version))
	gauge(g.lastRun, unix(s.LastReconcile))
	gauge(g.lastConverged, unix(s.LastConverged))
	trial := s.Trial
	if trial == "" {
		trial = TrialNone
	}
	for _, st := range TrialStates {
		v := 0.0
		if st == trial {
			v = 1
		}
		gauge(g.trial, v, st)
	}
	gauge(g.deadline, unix(s.TrialDeadline))
	for _, l := range s.LeasesRefused {
		gauge(g.leaseRefused, 1, l.Interface, l.Family)
	}
}

// unix is t in seconds since the epoch, 0 for the zero time.
func unix(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}
