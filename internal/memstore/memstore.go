// Package memstore is a store.Store in memory for tests: the fleet
// member's (agent/member) and the daemon loop's with a fleet source. It
// can be made unreachable the way etcd is (SetDown), hold its watches
// (Hold), and expire its leases (ExpireLeases) when the test says so;
// Put, Del and Get act as another client would. It runs under synctest:
// no goroutine of it blocks outside channels.
package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/netagent/netagent/store"
)

// Store is a store.Store (and Leaser) in memory for the tests of the
// daemon's loop and of its fleet member (synctest: no goroutine blocks
// outside channels). down makes it
// unreachable the way etcd is: operations fail with ErrUnavailable and
// watches deliver nothing until it is back. Leases expire only when the
// test says so.
type Store struct {
	mu        sync.Mutex
	rev       store.Version
	data      map[string]store.Entry
	log       []store.Event // every change, in revision order
	compacted store.Version
	down      bool
	held      bool // watches deliver nothing (without failing the rest)
	wake      chan struct{}
	leases    map[store.LeaseID]map[string]bool
	nextLease store.LeaseID
}

// New returns an empty store, reachable.
func New() *Store {
	return &Store{data: map[string]store.Entry{}, wake: make(chan struct{}), leases: map[store.LeaseID]map[string]bool{}}
}

var errMemDown = fmt.Errorf("mem store: %w", store.ErrUnavailable)

// broadcast wakes the watches (m.mu held).
func (m *Store) broadcast() {
	close(m.wake)
	m.wake = make(chan struct{})
}

// SetDown makes the store unreachable (operations fail with
// store.ErrUnavailable, watches deliver nothing) or reachable again.
func (m *Store) SetDown(down bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.down = down
	m.broadcast()
}

// Hold makes the watches deliver nothing (without failing the rest) or
// deliver again.
func (m *Store) Hold(held bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.held = held
	m.broadcast()
}

// Put writes key whatever the store's state (another client, elsewhere).
func (m *Store) Put(key, value string) store.Version {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.putLocked(key, []byte(value))
}

func (m *Store) putLocked(key string, value []byte) store.Version {
	m.rev++
	e := store.Entry{Key: key, Value: value, Version: m.rev}
	m.data[key] = e
	m.log = append(m.log, store.Event{Type: store.Put, Entry: e})
	m.broadcast()
	return m.rev
}

// Del deletes key whatever the store's state.
func (m *Store) Del(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.delLocked(key)
}

func (m *Store) delLocked(key string) {
	if _, ok := m.data[key]; !ok {
		return
	}
	m.rev++
	delete(m.data, key)
	m.log = append(m.log, store.Event{Type: store.Delete, Entry: store.Entry{Key: key, Version: m.rev}})
	m.broadcast()
}

// Get reads key whatever the store's state.
func (m *Store) Get(key string) (store.Entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.data[key]
	return e, ok
}

// ExpireLeases ends every lease, removing its keys.
func (m *Store) ExpireLeases() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, keys := range m.leases {
		for k := range keys {
			m.delLocked(k)
		}
		delete(m.leases, id)
	}
}

func (m *Store) Read(_ context.Context, key string) (store.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return store.Entry{}, errMemDown
	}
	e, ok := m.data[key]
	if !ok {
		return store.Entry{}, store.NotFound(key)
	}
	return e, nil
}

func (m *Store) cas(key string, expect store.Version) error {
	if m.down {
		return errMemDown
	}
	if m.data[key].Version != expect {
		return &store.CASError{Key: key, Expected: expect, Stored: m.data[key].Version}
	}
	return nil
}

func (m *Store) WriteCAS(_ context.Context, key string, value []byte, expect store.Version) (store.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.cas(key, expect); err != nil {
		return 0, err
	}
	return m.putLocked(key, value), nil
}

func (m *Store) DeleteCAS(_ context.Context, key string, expect store.Version) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.cas(key, expect); err != nil {
		return err
	}
	m.delLocked(key)
	return nil
}

func (m *Store) listLocked(dir string) []store.Entry {
	var out []store.Entry
	for k, e := range m.data {
		if strings.HasPrefix(k, dir) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b store.Entry) int { return strings.Compare(a.Key, b.Key) })
	return out
}

func (m *Store) List(_ context.Context, prefix string) ([]store.Entry, store.Version, error) {
	dir, err := store.ValidatePrefix(prefix)
	if err != nil {
		return nil, 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return nil, 0, errMemDown
	}
	return m.listLocked(dir), m.rev, nil
}

func (m *Store) ListKeys(ctx context.Context, prefix string) ([]store.Entry, store.Version, error) {
	entries, rev, err := m.List(ctx, prefix)
	for i := range entries {
		entries[i].Value = nil
	}
	return entries, rev, err
}

func (m *Store) Watch(ctx context.Context, prefix string, from store.Version) (*store.Watch, error) {
	dir, err := store.ValidatePrefix(prefix)
	if err != nil {
		return nil, err
	}
	return store.NewWatch(ctx, func(ctx context.Context, emit store.Emit) error {
		if from == store.NoVersion {
			m.mu.Lock()
			if m.down {
				m.mu.Unlock()
				return fmt.Errorf("%w: %w", store.ErrWatchClosed, errMemDown)
			}
			list, rev := m.listLocked(dir), m.rev
			m.mu.Unlock()
			for _, e := range list {
				if !emit(store.Event{Type: store.Put, Entry: e}) {
					return ctx.Err()
				}
			}
			if !emit(store.Event{Type: store.Synced, Entry: store.Entry{Version: rev}}) {
				return ctx.Err()
			}
			from = rev
		}
		for {
			m.mu.Lock()
			wake := m.wake
			var evs []store.Event
			if !m.down && !m.held {
				if from < m.compacted {
					m.mu.Unlock()
					return fmt.Errorf("%w: compacted", store.ErrWatchClosed)
				}
				for _, ev := range m.log {
					if ev.Entry.Version > from && strings.HasPrefix(ev.Entry.Key, dir) {
						evs = append(evs, ev)
					}
				}
				from = m.rev
			}
			m.mu.Unlock()
			for _, ev := range evs {
				if !emit(ev) {
					return ctx.Err()
				}
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-wake:
			}
		}
	}), nil
}

func (m *Store) Close() error { return nil }

func (m *Store) Compact(_ context.Context, rev store.Version) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.compacted = rev
	m.broadcast()
	return nil
}

func (m *Store) GrantLease(context.Context, time.Duration) (store.LeaseID, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return 0, errMemDown
	}
	m.nextLease++
	m.leases[m.nextLease] = map[string]bool{}
	return m.nextLease, nil
}

func (m *Store) KeepAlive(_ context.Context, id store.LeaseID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return errMemDown
	}
	if m.leases[id] == nil {
		return store.ErrLeaseExpired
	}
	return nil
}

func (m *Store) RevokeLease(_ context.Context, id store.LeaseID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return errMemDown
	}
	for k := range m.leases[id] {
		m.delLocked(k)
	}
	delete(m.leases, id)
	return nil
}

func (m *Store) WriteLeased(_ context.Context, key string, value []byte, expect store.Version, id store.LeaseID) (store.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.cas(key, expect); err != nil {
		return 0, err
	}
	if m.leases[id] == nil {
		return 0, store.ErrLeaseExpired
	}
	m.leases[id][key] = true
	return m.putLocked(key, value), nil
}

var (
	_ store.Store     = (*Store)(nil)
	_ store.Leaser    = (*Store)(nil)
	_ store.Compactor = (*Store)(nil)
)
