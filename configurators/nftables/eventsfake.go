package nftables

import (
	"context"
	"slices"
	"sync"
)

// FakeWatcher is an EventWatcher for tests of its consumers: Send
// delivers an event as a Watcher would (dropping the tables not
// followed, and the event if none is left and it is no Resync), Followed
// says what the consumer follows.
type FakeWatcher struct {
	mu      sync.Mutex
	follow  []string // nil: every table
	events  chan Event
	started chan struct{}
	once    sync.Once
}

var _ EventWatcher = (*FakeWatcher)(nil)

// NewFakeWatcher returns a FakeWatcher whose Watch sends a Resync first,
// as a Watcher does once subscribed.
func NewFakeWatcher() *FakeWatcher {
	return &FakeWatcher{events: make(chan Event, 64), started: make(chan struct{})}
}

// Watch forwards what Send sends until ctx ends.
func (f *FakeWatcher) Watch(ctx context.Context, events chan<- Event) {
	f.once.Do(func() { close(f.started) })
	pending := []Event{{Resync: true}}
	for {
		var out chan<- Event
		var next Event
		if len(pending) > 0 {
			out, next = events, pending[0]
		}
		select {
		case <-ctx.Done():
			return
		case out <- next:
			pending = pending[1:]
		case ev := <-f.events:
			pending = append(pending, ev)
		}
	}
}

// Started is closed once Watch runs.
func (f *FakeWatcher) Started() <-chan struct{} { return f.started }

// Follow records the tables followed.
func (f *FakeWatcher) Follow(tables []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.follow = slices.Clone(tables)
	if f.follow == nil {
		f.follow = []string{}
	}
}

// Followed returns the tables last given to Follow (nil: never called).
func (f *FakeWatcher) Followed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.follow)
}

// Send delivers ev, its tables filtered by Follow, as another writer's
// transaction would.
func (f *FakeWatcher) Send(ev Event) {
	f.mu.Lock()
	if f.follow != nil {
		ev.Tables = slices.DeleteFunc(slices.Clone(ev.Tables), func(t string) bool { return !slices.Contains(f.follow, t) })
	}
	f.mu.Unlock()
	if ev.Resync || len(ev.Tables) > 0 {
		f.events <- ev
	}
}
