package rollout

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store"
)

// StatusWatch follows the hosts' statuses (P/status/) with one store
// watch, so that a controller reads them from memory instead of listing
// them at every step, and wakes up when one changes. A watch that ends
// (etcd compacted its revision, or went away) is started again from the
// last revision seen, or, when that is compacted, from the start, the
// statuses held being replaced once the new listing is complete (until
// then the controller lists, as without a watch).
type StatusWatch struct {
	st     store.Store
	l      fleet.Layout
	notify chan struct{} // capacity 1

	mu     sync.Mutex
	hosts  map[string]*fleet.Status
	synced bool
	// Restarts counts the watches started again (tests, metrics).
	restarts int
}

// WatchStatuses starts following the statuses until ctx ends.
func WatchStatuses(ctx context.Context, st store.Store, l fleet.Layout) *StatusWatch {
	w := &StatusWatch{st: st, l: l, notify: make(chan struct{}, 1), hosts: map[string]*fleet.Status{}}
	go w.run(ctx)
	return w
}

// Changed delivers a value after a status changed (coalesced).
func (w *StatusWatch) Changed() <-chan struct{} { return w.notify }

// Restarts is how many times the watch was started again.
func (w *StatusWatch) Restarts() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.restarts
}

// statuses returns the statuses held (a copy of the map; the statuses
// are not changed, only replaced), or false while the watch is not in
// step with the store.
func (w *StatusWatch) statuses() (map[string]*fleet.Status, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.synced {
		return nil, false
	}
	out := make(map[string]*fleet.Status, len(w.hosts))
	for h, s := range w.hosts {
		out[h] = s
	}
	return out, true
}

// watchRetry is how long the watch waits before it is started again
// after the store refused it.
const watchRetry = time.Second

func (w *StatusWatch) run(ctx context.Context) {
	from := store.NoVersion
	for ctx.Err() == nil {
		next, err := w.follow(ctx, from)
		if ctx.Err() != nil {
			return
		}
		w.mu.Lock()
		w.restarts++
		if errors.Is(err, store.ErrWatchClosed) && next == from {
			// Compacted (or refused) where we were: list again.
			next, w.synced = store.NoVersion, false
		}
		w.mu.Unlock()
		from = next
		select {
		case <-ctx.Done():
		case <-time.After(watchRetry):
		}
	}
}

// follow runs one watch from from; it returns the last revision seen
// (from if none) and why the watch ended.
func (w *StatusWatch) follow(ctx context.Context, from store.Version) (store.Version, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watch, err := w.st.Watch(wctx, w.l.StatusDir(), from)
	if err != nil {
		return from, err
	}
	var listing map[string]*fleet.Status // a watch from NoVersion: until Synced
	if from == store.NoVersion {
		listing = map[string]*fleet.Status{}
	}
	last := from
	dir := w.l.StatusDir() + "/"
	for ev := range watch.C {
		if ev.Type == store.Synced {
			w.mu.Lock()
			w.hosts, w.synced, listing = listing, true, nil
			w.mu.Unlock()
			last = ev.Entry.Version
			w.kick()
			continue
		}
		host := strings.TrimPrefix(ev.Entry.Key, dir)
		st := parseStatus(host, ev.Entry.Value)
		if listing != nil {
			if ev.Type == store.Put && st != nil {
				listing[host] = st
			}
			continue
		}
		last = ev.Entry.Version
		w.mu.Lock()
		if ev.Type == store.Put && st != nil {
			w.hosts[host] = st
		} else {
			delete(w.hosts, host)
		}
		w.mu.Unlock()
		w.kick()
	}
	return last, watch.Err()
}

func (w *StatusWatch) kick() {
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// parseStatus decodes host's status, nil when the host's name or the
// value is not one (bounded: maxStatusBytes).
func parseStatus(host string, raw []byte) *fleet.Status {
	if fleet.CheckName("host", host) != nil || len(raw) > maxStatusBytes {
		return nil
	}
	var st fleet.Status
	if json.Unmarshal(raw, &st) != nil {
		return nil
	}
	return &st
}
