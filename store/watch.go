package store

import (
	"context"
	"sync"
)

// EventType says what an Event is.
type EventType int

const (
	// Put: Entry was written (created or replaced).
	Put EventType = iota + 1
	// Delete: Entry.Key was removed (explicitly or by a lease's end);
	// Entry.Version is the revision of the removal, Entry.Value is nil.
	Delete
	// Synced: a watch from NoVersion has delivered every entry that
	// existed at Entry.Version; changes follow.
	Synced
)

func (t EventType) String() string {
	switch t {
	case Put:
		return "put"
	case Delete:
		return "delete"
	case Synced:
		return "synced"
	}
	return "unknown"
}

// Event is one step of a Watch. Entry.Version is the event's revision:
// a watch resumed with Watch(ctx, prefix, ev.Entry.Version) delivers what
// came after it.
type Event struct {
	Type  EventType
	Entry Entry
}

// Watch is a running watch (Store.Watch). Read C until it closes, then
// Err says why it ended.
type Watch struct {
	// C delivers the events in order; it is closed when the watch ends.
	C <-chan Event

	done chan struct{}
	mu   sync.Mutex
	err  error
}

// Err returns why the watch ended: ctx's error after its end, an error
// wrapping ErrWatchClosed when the backend ended it, or nil while it runs.
func (w *Watch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Done is closed when the watch has ended (C is closed then too).
func (w *Watch) Done() <-chan struct{} { return w.done }

// Emit sends an event to a watch's consumer; false means the watch's
// context ended and the producer must return.
type Emit func(Event) bool

// NewWatch runs produce in a goroutine, for backends: produce sends the
// events through emit and returns why it stopped. The watch ends when
// produce returns; a ctx that ended wins over produce's error, so that a
// cancelled watch ends with ctx's error, never with ErrWatchClosed.
func NewWatch(ctx context.Context, produce func(ctx context.Context, emit Emit) error) *Watch {
	c := make(chan Event)
	w := &Watch{C: c, done: make(chan struct{})}
	emit := func(ev Event) bool {
		select {
		case c <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	}
	go func() {
		err := produce(ctx, emit)
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
		close(w.done) // before C: a consumer that sees C closed finds Err set
		close(c)
	}()
	return w
}

// EmitListing starts a watch from NoVersion, for backends: it emits
// entries (a listing read at revision rev) as Put events, then a Synced
// event at rev. It returns ctx's error when the watch's context ended
// meanwhile, and nil when every event was delivered.
func EmitListing(ctx context.Context, emit Emit, entries []Entry, rev Version) error {
	for _, e := range entries {
		if !emit(Event{Type: Put, Entry: e}) {
			return ctx.Err()
		}
	}
	if !emit(Event{Type: Synced, Entry: Entry{Version: rev}}) {
		return ctx.Err()
	}
	return nil
}
