package member

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/snapshot"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store"
)

// SnapshotPublisherConfig says what a SnapshotPublisher publishes, where
// and how often.
type SnapshotPublisherConfig struct {
	Store  store.Store
	Layout fleet.Layout
	Host   string
	Log    logrus.FieldLogger
	// Every bounds the publisher to one snapshot taken (and at most one
	// write) per Every; it is also how often the host is looked at for
	// changes no status shows (another owner's link, a route).
	Every time.Duration
	// Take takes the host's snapshot (snapshot.Take of the daemon's
	// namespace and state directory). It runs on the publisher's
	// goroutine, never the loop's.
	Take func(ctx context.Context) (*snapshot.Document, error)
}

// SnapshotPublisher publishes the host's snapshot to Layout.Snapshot(Host)
// when it changes (`netagent run --publish-snapshot`): when told the
// agent's state changed (Changed, at every new status) and every Every,
// it takes a snapshot, at most one per Every (changes in between are
// coalesced into the next), and writes it only when its bytes differ
// from the last written (after a restart: from what the store holds). A snapshot larger than the store takes
// (snapshot.MaxStored) is not written, and the one written before, which
// no longer says what the host holds, is deleted; State says so, and the
// fleet status carries it. The key has no lease: a controller plans a
// host from it while the host is down, too. Writes are compare-and-swap
// on the version last written; another writer of the key (a second host
// of the same name) is overwritten and logged.
type SnapshotPublisher struct {
	cfg  SnapshotPublisherConfig
	key  string
	kick chan struct{} // capacity 1: the state may have changed

	mu      sync.Mutex
	state   *fleet.SnapshotState
	changed func() // told when state changes (the status writer)

	// Owned by Run.
	last    []byte        // the bytes last written (nil: none)
	version store.Version // of the last write; -1: unknown
	taken   time.Time     // when the last snapshot was taken
}

// NewSnapshotPublisher checks cfg and returns its publisher; Run it.
func NewSnapshotPublisher(cfg SnapshotPublisherConfig) (*SnapshotPublisher, error) {
	if cfg.Store == nil || cfg.Log == nil || cfg.Take == nil {
		return nil, errors.New("snapshot publisher: Store, Log and Take are required")
	}
	if err := fleet.CheckName("host", cfg.Host); err != nil {
		return nil, err
	}
	if cfg.Every <= 0 {
		return nil, fmt.Errorf("snapshot publisher: interval %v is not positive", cfg.Every)
	}
	return &SnapshotPublisher{cfg: cfg, key: cfg.Layout.Snapshot(cfg.Host), kick: make(chan struct{}, 1), version: -1}, nil
}

// Changed tells the publisher that the agent's state may have changed;
// it never blocks.
func (p *SnapshotPublisher) Changed() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// State is the published snapshot's state (nil: nothing tried yet).
func (p *SnapshotPublisher) State() *fleet.SnapshotState {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state == nil {
		return nil
	}
	s := *p.state
	return &s
}

// notify sets the function told when State changes.
func (p *SnapshotPublisher) notify(f func()) {
	p.mu.Lock()
	p.changed = f
	p.mu.Unlock()
}

func (p *SnapshotPublisher) set(s fleet.SnapshotState) {
	p.mu.Lock()
	same := p.state != nil && *p.state == s
	p.state = &s
	f := p.changed
	p.mu.Unlock()
	if !same && f != nil {
		f()
	}
}

// Run publishes until ctx ends: once at the start, then at each change
// and every Every, never twice within Every.
func (p *SnapshotPublisher) Run(ctx context.Context) {
	tick := time.NewTicker(p.cfg.Every)
	defer tick.Stop()
	p.Changed()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
		case <-tick.C:
		}
		if wait := time.Until(p.taken.Add(p.cfg.Every)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		select { // what came meanwhile is in this snapshot
		case <-p.kick:
		default:
		}
		if err := p.publish(ctx); err != nil && ctx.Err() == nil {
			p.cfg.Log.WithError(err).WithField("key", p.key).Warn("publishing the host's snapshot")
		}
	}
}

// publish takes a snapshot and writes it if it is not the last written.
func (p *SnapshotPublisher) publish(ctx context.Context) error {
	p.taken = time.Now()
	d, err := p.cfg.Take(ctx)
	if err != nil {
		return p.failed(fmt.Errorf("taking the snapshot: %w", err))
	}
	raw, err := d.EncodeStored()
	if errors.Is(err, snapshot.ErrTooLarge) {
		return p.failed(errors.Join(fmt.Errorf("not published: %w", err), p.remove(ctx)))
	}
	if err != nil {
		return p.failed(err)
	}
	if p.version >= 0 && bytes.Equal(raw, p.last) {
		return nil
	}
	v, err := p.write(ctx, raw)
	if err != nil {
		return p.failed(err)
	}
	p.last, p.version = raw, v
	p.set(fleet.SnapshotState{Published: time.Now().UTC(), Revision: int64(v), Bytes: len(raw)})
	return nil
}

// failed keeps err in State (with what was published before) and
// returns it.
func (p *SnapshotPublisher) failed(err error) error {
	s := fleet.SnapshotState{}
	if old := p.State(); old != nil {
		s = *old
	}
	s.Error = err.Error()
	p.set(s)
	return err
}

// write writes raw over the version last written (or read: a restart),
// once more over another writer's.
func (p *SnapshotPublisher) write(ctx context.Context, raw []byte) (store.Version, error) {
	for try := 0; ; try++ {
		if p.version < 0 {
			v, stored, err := p.current(ctx)
			if err != nil {
				return 0, err
			}
			p.version = v
			if bytes.Equal(stored, raw) {
				return v, nil // as a run before this one published it
			}
		}
		v, err := p.cfg.Store.WriteCAS(ctx, p.key, raw, p.version)
		if errors.Is(err, store.ErrCASFailed) && try == 0 {
			p.cfg.Log.WithField("key", p.key).Warn("another writer wrote this host's snapshot (a second host of the same name?): overwriting it")
			p.version = -1
			continue
		}
		if err != nil {
			p.version = -1
			return 0, fmt.Errorf("writing %s: %w", p.key, err)
		}
		return v, nil
	}
}

// current is the key's version in the store (NoVersion: none) and its
// value.
func (p *SnapshotPublisher) current(ctx context.Context) (store.Version, []byte, error) {
	e, err := p.cfg.Store.Read(ctx, p.key)
	if errors.Is(err, store.ErrNotFound) {
		return store.NoVersion, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("reading %s: %w", p.key, err)
	}
	return e.Version, e.Value, nil
}

// remove deletes the snapshot written before, if any.
func (p *SnapshotPublisher) remove(ctx context.Context) error {
	v, _, err := p.current(ctx)
	if err != nil || v == store.NoVersion {
		return err
	}
	if err := p.cfg.Store.DeleteCAS(ctx, p.key, v); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("deleting the stale %s: %w", p.key, err)
	}
	p.last, p.version = nil, store.NoVersion
	p.mu.Lock()
	if p.state != nil {
		p.state.Published, p.state.Revision, p.state.Bytes = time.Time{}, 0, 0
	}
	p.mu.Unlock()
	return nil
}
