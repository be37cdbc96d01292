// Package metrics holds the daemon's Prometheus metrics: their
// definitions, a registry per agent (never the global default registry, so
// that tests and several agents in one process do not collide), and their
// collection from what the reconciler already reports.
//
// The agent's loop feeds it, from its own goroutine, after the events it
// handles: ObserveReconcile after each reconcile (the reasons and the
// operation log, whose entries carry their durations), ObserveDrift after
// each drift check, and Publish with a Snapshot of the gauges (items by
// state, blocked items, intent version, trial) after each turn that may
// have changed them. Scrapes (Handler, WriteText) only read the registry:
// counters and histograms are safe for concurrent use, and the gauges come
// from the last Snapshot, copied under a lock, so a scrape never waits for
// the loop and never sees half a snapshot. A Server (server.go: Listen,
// Serve) serves them over HTTP at /metrics for the daemon's
// --metrics-listen.
//
// The metrics, all prefixed netagent_:
//
//	reconciles_total{reason}                  counter: reconciles, by why they ran (one run for several reasons counts under each)
//	reconcile_duration_seconds                histogram: how long each reconcile took (its _count counts reconciles)
//	kernel_operations_total{kind,op,outcome}  counter: operations finished, by item type, create/modify/delete, success/failure
//	kernel_operation_duration_seconds{kind,op,outcome}  histogram: their durations
//	item_retries_total{kind}                  counter: operations on an item whose last operation had failed
//	drift_found_total{kind}                   counter: differences drift checks found in the kernel (changes someone else made, and changes the kernel did not keep; the agent passes a "report" item's once, not repaired, and an "ignore" item's not at all)
//	drift_repaired_total{kind}                counter: differences found by a check that a later operation repaired
//	items{state}                              gauge: managed items by state (created, failed, blocked, pending, not-converging, orphaned, creating, modifying, deleting)
//	blocked_items                             gauge: intended items that cannot be created now (waiting for another item)
//	intent_version                            gauge: the current version of the intent (0: none)
//	last_reconcile_timestamp_seconds          gauge: when the last reconcile ended (Unix time; 0: none yet)
//	last_converged_reconcile_timestamp_seconds  gauge: when the last reconcile ended that left every item created and nothing failed (0: none yet)
//	trial_state{state}                        gauge: 1 for the daemon's trial state (none, pending), 0 for the others
//	trial_deadline_timestamp_seconds          gauge: when the pending trial reverts unless confirmed (0: none pending)
//	trials_total{result}                      counter: trials ended since the start, by result (confirmed, reverted)
//	lease_refused{interface,family}            gauge: 1 while the lease of the interface is refused in part or whole
//	dhcp4_lease_events_total{interface,event}  counter: DHCPv4 lease events (acquired, renewed, rebound, expired, lost, refused)
//	dhcp6_lease_events_total{interface,event}  counter: DHCPv6 lease events (the same events)
//
// A rollout controller's metrics are Rollouts' (rollouts.go).
//
// An operation that goes on in the background counts when it finishes
// (the reconcile that settles it logs it again, with its whole duration).
package metrics

import (
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

const namespace = "netagent"

// The outcomes of kernel_operations_total.
const (
	OutcomeSuccess = "success"
	OutcomeFailure = "failure"
)

// The trial states of trial_state.
const (
	TrialNone    = "none"
	TrialPending = "pending"
)

// TrialStates lists the values of trial_state's label, each always
// exported.
var TrialStates = []string{TrialNone, TrialPending}

// OperationBuckets are the bounds of the operation duration histogram:
// from a netlink call (tens of µs) to an iptables-restore or an
// asynchronous operation (seconds).
var OperationBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// ReconcileBuckets are the bounds of the reconcile duration histogram.
var ReconcileBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Snapshot is the daemon's state that the gauges show, taken by the loop.
type Snapshot struct {
	// Items counts the managed items by state. Give every known state,
	// zeros included, so that each series always exists.
	Items   map[string]int
	Blocked int
	Version int
	// LastReconcile and LastConverged are when the last reconcile, and
	// the last one that converged, ended (zero: none yet).
	LastReconcile, LastConverged time.Time
	// Trial is TrialNone or TrialPending; Deadline the pending trial's.
	Trial         string
	TrialDeadline time.Time
	// LastTrial is how the last trial ended (nil: none known). A new
	// outcome (another At) counts in trials_total; the one of the first
	// Snapshot, from before the start, does not.
	LastTrial *TrialEnd
	// LeasesRefused are the leases refused in part or whole, each a
	// series of lease_refused while it is.
	LeasesRefused []LeaseRefused
}

// LeaseRefused is a lease the intent refused in part or whole.
type LeaseRefused struct {
	Interface string
	Family    string // ipv4 or ipv6
}

// TrialEnd is how a trial ended.
type TrialEnd struct {
	Result string // confirmed or reverted
	At     time.Time
}

// Metrics is one agent's metrics and their registry. Observe*, Publish and
// Register are called from the agent's loop; the rest from any goroutine.
type Metrics struct {
	reg *prometheus.Registry

	reconciles   *prometheus.CounterVec
	reconcileDur prometheus.Histogram
	ops          *prometheus.CounterVec
	opDur        *prometheus.HistogramVec
	retries      *prometheus.CounterVec
	driftFound   *prometheus.CounterVec
	driftFixed   *prometheus.CounterVec
	trials       *prometheus.CounterVec
	leases       *prometheus.CounterVec
	leases6      *prometheus.CounterVec

	gauges *gauges

	// pending are the items of the last drift check's differences to be
	// repaired; the loop's only.
	pending   map[dg.ItemRef]bool
	seenTrial bool      // a Snapshot was published: its LastTrial is the baseline
	trialAt   time.Time // the At of the last trial outcome counted
}

// New returns the metrics of one agent, in a registry of their own.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "reconciles_total",
			Help: "Reconciles, by why they ran (a reconcile run for several reasons counts under each)."}, []string{"reason"}),
		reconcileDur: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Name: "reconcile_duration_seconds",
			Help: "How long each reconcile took.", Buckets: ReconcileBuckets}),
		ops: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "kernel_operations_total",
			Help: "Kernel operations finished, by item type (kind), operation (create, modify, delete) and outcome (success, failure)."},
			[]string{"kind", "op", "outcome"}),
		opDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "kernel_operation_duration_seconds",
			Help: "Durations of the kernel operations, by item type (kind), operation and outcome.", Buckets: OperationBuckets},
			[]string{"kind", "op", "outcome"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "item_retries_total",
			Help: "Operations on an item whose last operation had failed, by item type (kind)."}, []string{"kind"}),
		driftFound: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "drift_found_total",
			Help: "Differences between the kernel and the agent's state found by drift checks, by item type (kind)."}, []string{"kind"}),
		driftFixed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "drift_repaired_total",
			Help: "Differences found by a drift check that a later operation repaired, by item type (kind)."}, []string{"kind"}),
		trials: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "trials_total",
			Help: "Trials ended since the daemon started, by result (confirmed, reverted)."}, []string{"result"}),
		leases: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "dhcp4_lease_events_total",
			Help: "DHCPv4 lease events, by interface and event (" + strings.Join(LeaseEvents, ", ") + ")."}, []string{"interface", "event"}),
		leases6: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "dhcp6_lease_events_total",
			Help: "DHCPv6 lease events, by interface and event (" + strings.Join(LeaseEvents, ", ") + ")."}, []string{"interface", "event"}),
		gauges:  newGauges(),
		pending: map[dg.ItemRef]bool{},
	}
	m.reg.MustRegister(m.reconciles, m.reconcileDur, m.ops, m.opDur, m.retries, m.driftFound, m.driftFixed, m.trials, m.leases, m.leases6, m.gauges)
	for _, r := range []string{"confirmed", "reverted"} {
		m.trials.WithLabelValues(r)
	}
	return m
}

// The events of a DHCPv4 lease (netagent_dhcp4_lease_events_total):
// acquired (a new binding: DISCOVER, or INIT-REBOOT after a restart or a
// carrier loss), renewed (at T1, from the server), rebound (after T2, from
// any server), expired (no server extended it: its address and routes are
// withdrawn), lost (let go: the carrier went or the intent dropped dhcp4)
// refused (a NAK) and invalid (an answer whose address no host can have:
// the lease is not taken, a lease held stays).
var LeaseEvents = []string{"acquired", "renewed", "rebound", "expired", "lost", "refused", "invalid"}

// ObserveLease counts one lease event on ifname.
func (m *Metrics) ObserveLease(ifname, event string) { m.leases.WithLabelValues(ifname, event).Inc() }

// ObserveLease6 counts one DHCPv6 lease event on ifname
// (netagent_dhcp6_lease_events_total: the events of LeaseEvents; refused
// is a REPLY that takes the address back, NoBinding or a lifetime of 0).
func (m *Metrics) ObserveLease6(ifname, event string) { m.leases6.WithLabelValues(ifname, event).Inc() }

// Register adds collectors to the registry (the daemon adds the Go
// runtime's and the process's).
func (m *Metrics) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Gatherer is the registry, for tests and other exporters.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// Handler serves the metrics over HTTP (GET /metrics), in the format the
// scraper asks for (the text format by default).
func (m *Metrics) Handler() http.Handler { return handler(m.reg) }

// WriteText writes the metrics in the Prometheus text format (0.0.4).
func (m *Metrics) WriteText(w io.Writer) error { return writeText(m.reg, w) }

func handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

func writeText(g prometheus.Gatherer, w io.Writer) error {
	mfs, err := g.Gather()
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if e := enc.Encode(mf); e != nil {
			return e
		}
	}
	return err
}

// ObserveReconcile counts one reconcile, run for reasons from start to
// end, and the operations of its log. An operation still in progress
// counts when a later log has it finished.
func (m *Metrics) ObserveReconcile(reasons []string, start, end time.Time, log reconciler.OperationLog) {
	for _, r := range reasons {
		m.reconciles.WithLabelValues(r).Inc()
	}
	m.reconcileDur.Observe(end.Sub(start).Seconds())
	for _, e := range log {
		m.observeOp(e)
	}
}

func (m *Metrics) observeOp(e reconciler.OpLogEntry) {
	if e.InProgress {
		return
	}
	kind, op, outcome := e.Ref.Type, e.Op.String(), OutcomeSuccess
	if e.Err != nil {
		outcome = OutcomeFailure
	}
	m.ops.WithLabelValues(kind, op, outcome).Inc()
	if !e.End.IsZero() && !e.End.Before(e.Start) {
		m.opDur.WithLabelValues(kind, op, outcome).Observe(e.End.Sub(e.Start).Seconds())
	}
	if e.PrevErr != nil {
		m.retries.WithLabelValues(kind).Inc()
	}
	if e.Err == nil && m.pending[e.Ref] {
		delete(m.pending, e.Ref)
		m.driftFixed.WithLabelValues(kind).Inc()
	}
}

// Finding is one difference a drift check found.
type Finding struct {
	Ref dg.ItemRef
	// Repair: the agent put the kernel's version into its state, so that
	// the next reconcile repairs it (false: held, reported only).
	Repair bool
}

// ObserveDrift counts the differences one drift check found. Those to
// repair count as repaired when an operation on the item succeeds before
// the next check; one the next check finds again counts again.
func (m *Metrics) ObserveDrift(found []Finding) {
	clear(m.pending)
	for _, f := range found {
		m.driftFound.WithLabelValues(f.Ref.Type).Inc()
		if f.Repair {
			m.pending[f.Ref] = true
		}
	}
}

// Publish sets the gauges to s; a scrape sees all of s or none of it.
func (m *Metrics) Publish(s Snapshot) {
	if lt := s.LastTrial; lt != nil && !lt.At.Equal(m.trialAt) {
		if m.seenTrial {
			m.trials.WithLabelValues(lt.Result).Inc()
		}
		m.trialAt = lt.At
	}
	m.seenTrial = true
	m.gauges.set(s)
}
