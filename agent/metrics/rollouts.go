package metrics

import (
	"io"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Rollouts is a rollout controller's metrics (`netagent fleet
// controller --metrics-listen`), in a registry of their own:
//
//	rollout_hosts{rollout,wave,state}  gauge: a wave's hosts by state (queued, pushing, pending, confirmed, reverted, timeout, conflict, skipped, rolled-back; not-ready counts confirmed hosts that are not Ready)
//	rollout_halted_total{rollout}      counter: halts this controller saw happen (its own, an operator's)
type Rollouts struct {
	reg    *prometheus.Registry
	halted *prometheus.CounterVec
	hosts  *prometheus.Desc

	mu   sync.Mutex
	rows map[string][]WaveHosts // by rollout
}

// WaveHosts is one row of rollout_hosts.
type WaveHosts struct {
	Wave, State string
	Hosts       int
}

// NewRollouts returns empty rollout metrics.
func NewRollouts() *Rollouts {
	r := &Rollouts{
		reg: prometheus.NewRegistry(),
		halted: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "rollout_halted_total",
			Help: "Halts of rollouts this controller ran (its own, when a wave failed beyond its tolerance, and an operator's)."}, []string{"rollout"}),
		hosts: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "rollout_hosts"),
			"The hosts of each started wave of a rollout, by state (not-ready: confirmed, then not Ready or Degraded).", []string{"rollout", "wave", "state"}, nil),
		rows: map[string][]WaveHosts{},
	}
	r.reg.MustRegister(r.halted, (*rolloutHosts)(r))
	return r
}

// SetHosts replaces the rows of rollout.
func (r *Rollouts) SetHosts(rollout string, rows []WaveHosts) {
	r.mu.Lock()
	r.rows[rollout] = rows
	r.mu.Unlock()
}

// Halted counts a halt of rollout.
func (r *Rollouts) Halted(rollout string) { r.halted.WithLabelValues(rollout).Inc() }

// Known makes rollout's halted counter exist (at 0).
func (r *Rollouts) Known(rollout string) { r.halted.WithLabelValues(rollout) }

// Register adds collectors (Listen adds the Go runtime's and the process's).
func (r *Rollouts) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := r.reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Handler serves the metrics (GET /metrics).
func (r *Rollouts) Handler() http.Handler { return handler(r.reg) }

// WriteText writes the metrics in the Prometheus text format.
func (r *Rollouts) WriteText(w io.Writer) error { return writeText(r.reg, w) }

// rolloutHosts collects rollout_hosts from the rows.
type rolloutHosts Rollouts

func (c *rolloutHosts) Describe(ch chan<- *prometheus.Desc) { ch <- c.hosts }

func (c *rolloutHosts) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, rows := range c.rows {
		for _, w := range rows {
			ch <- prometheus.MustNewConstMetric(c.hosts, prometheus.GaugeValue, float64(w.Hosts), id, w.Wave, w.State)
		}
	}
}
