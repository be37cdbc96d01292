package member

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store"
)

// DefaultStatusTTL is the lease of a fleet member's status: a host that
// stops renewing it (it died, or lost the store) disappears from
// Layout.StatusDir this long after its last renewal.
const DefaultStatusTTL = 15 * time.Second

// StatusWriterConfig says where a StatusWriter writes.
type StatusWriterConfig struct {
	Store  store.Store
	Layout fleet.Layout
	Host   string
	// Labels go into every status written (rollouts select hosts by them).
	Labels map[string]string
	Log    logrus.FieldLogger
	// TTL is the status's lease (DefaultStatusTTL), renewed (KeepAlive)
	// every TTL/3: the status key exists while its writer lives.
	TTL time.Duration
	// Source, if set, is told whether the store answers (SetReachable):
	// a store watch does not notice an outage, the renewals do.
	Source *StoreSource
}

// StatusWriter writes the agent's fleet.Status (the agent's Config.Report) to
// Layout.Status(Host) under a lease, when it changes: a renewal is a
// KeepAlive of the lease, no write (no new store revision, no event for
// the fleet's watchers), and the key's presence says the host is alive.
// It writes again when the status changed, when a write failed, and when
// the lease expired (its key went with it). A store without leases
// (store.Leaser) gets plain writes. The writes are compare-and-swap on
// the version it last wrote; another writer of the same key (a second
// host of the same name) is overwritten and logged.
type StatusWriter struct {
	cfg    StatusWriterConfig
	key    string
	leaser store.Leaser // nil: the store has no leases

	mu       sync.Mutex
	latest   *fleet.Status
	kick     chan struct{}      // capacity 1: a new status to write
	snapshot *SnapshotPublisher // nil: none published

	// Owned by Run.
	lease   store.LeaseID // 0: none
	version store.Version // of the last write; -1: unknown (write again)
	written *fleet.Status // the last status written (nil: none)
	// renewed, if set (tests), is called after each renewal of the lease.
	renewed func()
}

// NewStatusWriter checks cfg and returns its writer; Run it.
func NewStatusWriter(cfg StatusWriterConfig) (*StatusWriter, error) {
	if cfg.Store == nil || cfg.Log == nil {
		return nil, errors.New("status writer: Store and Log are required")
	}
	if err := fleet.CheckName("host", cfg.Host); err != nil {
		return nil, err
	}
	if err := fleet.CheckLabels(cfg.Labels); err != nil {
		return nil, err
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultStatusTTL
	}
	w := &StatusWriter{cfg: cfg, key: cfg.Layout.Status(cfg.Host), kick: make(chan struct{}, 1), version: -1}
	w.leaser, _ = cfg.Store.(store.Leaser)
	if cfg.Source != nil {
		cfg.Source.mu.Lock()
		cfg.Source.writer = w
		cfg.Source.mu.Unlock()
	}
	return w, nil
}

// Report takes the agent's latest status (the agent's Config.Report); it never
// blocks.
func (w *StatusWriter) Report(st fleet.Status) {
	if w.cfg.Source != nil {
		w.cfg.Source.observe(st)
		st.Trial = w.cfg.Source.trialState()
		bakeDegraded(&st)
	}
	w.mu.Lock()
	if w.snapshot != nil {
		st.Snapshot = w.snapshot.State()
	}
	w.latest = &st
	w.mu.Unlock()
	w.wake()
}

func (w *StatusWriter) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// trialChanged writes the latest status again with the source's trial.
func (w *StatusWriter) trialChanged() {
	w.mu.Lock()
	if w.latest != nil {
		st := *w.latest
		st.Trial = w.cfg.Source.trialState()
		bakeDegraded(&st)
		w.latest = &st
	}
	w.mu.Unlock()
	w.wake()
}

// showSnapshot puts p's state in every status from now on, and writes
// the latest again whenever it changes.
func (w *StatusWriter) showSnapshot(p *SnapshotPublisher) {
	w.mu.Lock()
	w.snapshot = p
	w.mu.Unlock()
	p.notify(func() {
		w.mu.Lock()
		if w.latest != nil {
			st := *w.latest
			st.Snapshot = p.State()
			w.latest = &st
		}
		w.mu.Unlock()
		w.wake()
	})
}

// Run writes the status whenever it changes and renews its lease every
// TTL/3 until ctx ends; then it revokes the lease (the status goes).
func (w *StatusWriter) Run(ctx context.Context) {
	tick := time.NewTicker(w.cfg.TTL / 3)
	defer tick.Stop()
	for {
		renew := false
		select {
		case <-ctx.Done():
			w.stop()
			return
		case <-w.kick:
		case <-tick.C:
			renew = true
		}
		asked, err := w.step(ctx, renew)
		if ctx.Err() != nil {
			continue
		}
		if err != nil {
			w.cfg.Log.WithError(err).WithField("key", w.key).Warn("writing the fleet status")
		}
		if w.cfg.Source != nil && asked && (err == nil || errors.Is(err, store.ErrUnavailable)) {
			w.cfg.Source.SetReachable(err)
		}
	}
}

// stop revokes the lease, so that the status goes with the agent.
func (w *StatusWriter) stop() {
	if w.leaser == nil || w.lease == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := w.leaser.RevokeLease(ctx, w.lease); err != nil {
		w.cfg.Log.WithError(err).Warn("revoking the fleet status's lease; it expires by itself")
	}
}

// step renews the lease (if renew) and writes the latest status if it
// is not the one written. asked: it asked the store something, so err
// (nil or not) says whether the store answers.
func (w *StatusWriter) step(ctx context.Context, renew bool) (asked bool, err error) {
	asked, err = w.ensureLease(ctx, renew)
	if err != nil {
		return true, err
	}
	w.mu.Lock()
	latest := w.latest
	w.mu.Unlock()
	if latest == nil {
		return asked, nil // nothing to say yet
	}
	if w.version >= 0 && w.written != nil && sameStatus(w.written, latest) {
		return asked, nil // written already; the lease keeps it
	}
	st := *latest
	st.Host, st.Labels, st.Updated = w.cfg.Host, w.cfg.Labels, time.Now().UTC()
	if w.leaser != nil {
		st.Lease = w.cfg.TTL.String()
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return asked, fmt.Errorf("encoding the status: %w", err)
	}
	err = w.write(ctx, raw)
	if errors.Is(err, store.ErrLeaseExpired) {
		w.lease = 0
		if _, err = w.ensureLease(ctx, false); err == nil {
			err = w.write(ctx, raw)
		}
	}
	if err == nil {
		w.written = latest
	}
	return true, err
}

// sameStatus compares two reports as the writer sees them: SameReport
// and the trial.
func sameStatus(x, y *fleet.Status) bool {
	xt, yt := *x, *y
	xt.Trial, yt.Trial, xt.Snapshot, yt.Snapshot = nil, nil, nil, nil
	if !SameReport(&xt, &yt) || (x.Trial == nil) != (y.Trial == nil) || (x.Snapshot == nil) != (y.Snapshot == nil) {
		return false
	}
	return (x.Trial == nil || x.Trial.Equal(*y.Trial)) && (x.Snapshot == nil || *x.Snapshot == *y.Snapshot)
}

// ensureLease grants a lease if there is none, and renews it if renew;
// asked: it asked the store.
func (w *StatusWriter) ensureLease(ctx context.Context, renew bool) (asked bool, err error) {
	if w.leaser == nil {
		return false, nil
	}
	if w.lease != 0 && renew {
		asked = true
		err := w.leaser.KeepAlive(ctx, w.lease)
		switch {
		case errors.Is(err, store.ErrLeaseExpired):
			w.cfg.Log.WithField("key", w.key).Info("the fleet status's lease expired; granting a new one")
			w.lease = 0
		case err != nil:
			return true, err
		case w.renewed != nil:
			w.renewed()
		}
	}
	if w.lease == 0 {
		id, err := w.leaser.GrantLease(ctx, w.cfg.TTL)
		if err != nil {
			return true, err
		}
		w.lease, asked = id, true
		w.version = -1 // the key went with the old lease: write it again
	}
	return asked, nil
}

// write stores raw under the key, compare-and-swap on the version last
// written (read again when unknown or when another writer got there).
func (w *StatusWriter) write(ctx context.Context, raw []byte) error {
	for attempt := 0; ; attempt++ {
		if w.version < 0 {
			e, err := w.cfg.Store.Read(ctx, w.key)
			switch {
			case errors.Is(err, store.ErrNotFound):
				w.version = store.NoVersion
			case err != nil:
				return err
			default:
				w.version = e.Version
			}
		}
		var v store.Version
		var err error
		if w.leaser != nil {
			v, err = w.leaser.WriteLeased(ctx, w.key, raw, w.version, w.lease)
		} else {
			v, err = w.cfg.Store.WriteCAS(ctx, w.key, raw, w.version)
		}
		if errors.Is(err, store.ErrCASFailed) && attempt == 0 {
			if w.version > 0 {
				w.cfg.Log.WithField("key", w.key).Warn("another writer changed this host's fleet status (two hosts of one name?); overwriting it")
			}
			w.version = -1
			continue
		}
		if err != nil {
			w.version = -1
			return err
		}
		w.version = v
		return nil
	}
}

// CondBakeProbe is the condition of a host whose trial's probe failed
// during its bake (fleet.Trial.BakeProbe): the host is Degraded.
const CondBakeProbe = "BakeProbe"

// bakeDegraded makes st Degraded, with a CondBakeProbe condition naming
// the probe, when its trial's probe failed during the bake.
func bakeDegraded(st *fleet.Status) {
	if st.Trial == nil || st.Trial.BakeProbe == "" {
		return
	}
	st.Degraded = true
	if slices.ContainsFunc(st.Conditions, func(c fleet.Condition) bool { return c.Type == CondBakeProbe }) {
		return
	}
	st.Conditions = append(slices.Clone(st.Conditions), fleet.Condition{Type: CondBakeProbe, Status: true, Reason: "ProbeFailed",
		Message: fmt.Sprintf("during the bake of %s: %s", st.Trial.Source, st.Trial.BakeFailure)})
}
