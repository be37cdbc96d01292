package api

import (
	"context"
	"sync"
	"time"

	"github.com/netagent/netagent/agent/status"
)

// WatchBuffer is how many events a subscriber may have unread before the
// next ones are dropped (and counted).
const WatchBuffer = 256

// Hub fans the daemon's events out to its subscribers (the watching
// clients). Its methods are safe anywhere; Publish never waits.
type Hub struct {
	mu   sync.Mutex
	subs map[*Subscriber]struct{}
}

// NewHub returns a hub without subscribers.
func NewHub() *Hub { return &Hub{subs: map[*Subscriber]struct{}{}} }

// Subscriber is one watching client: a bounded buffer and the count of
// the events dropped since it last read (guarded by the hub's mu).
type Subscriber struct {
	ch     chan Event
	missed int
	wake   chan struct{} // signalled when missed becomes non-zero
}

// NewSubscriber returns a subscriber that may have n events unread
// (WatchBuffer for a client).
func NewSubscriber(n int) *Subscriber {
	return &Subscriber{ch: make(chan Event, n), wake: make(chan struct{}, 1)}
}

// Add makes s receive what is published from now on.
func (h *Hub) Add(s *Subscriber) {
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
}

// Remove ends s's subscription.
func (h *Hub) Remove(s *Subscriber) {
	h.mu.Lock()
	delete(h.subs, s)
	h.mu.Unlock()
}

// Count is the number of subscribers.
func (h *Hub) Count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Publish hands evs to every subscriber without waiting: a subscriber
// whose buffer is full, or that already missed events, misses them too
// (in order: nothing is delivered after a gap before the gap is told).
func (h *Hub) Publish(evs []Event) {
	if len(evs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		for _, e := range evs {
			if s.missed == 0 {
				select {
				case s.ch <- e:
					continue
				default:
				}
			}
			s.missed++
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
	}
}

// Next returns the subscriber's next event: what is buffered, then the
// count of the events it missed (EventMissed); false when done is closed
// first.
func (h *Hub) Next(s *Subscriber, done <-chan struct{}) (Event, bool) {
	for {
		select {
		case e := <-s.ch:
			return e, true
		default:
		}
		h.mu.Lock()
		n := s.missed
		s.missed = 0
		h.mu.Unlock()
		if n > 0 {
			return Event{Format: EventFormat, Time: time.Now(), Kind: EventMissed, Missed: n}, true
		}
		select {
		case e := <-s.ch:
			return e, true
		case <-s.wake:
		case <-done:
			return Event{}, false
		}
	}
}

// Stream calls f with s's events until ctx ends (ctx's error), stopped is
// closed (ErrNotRunning: the daemon stopped) or f fails (its error).
func (h *Hub) Stream(ctx context.Context, s *Subscriber, stopped <-chan struct{}, f func(Event) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-stopped:
			cancel()
		case <-ctx.Done():
		}
	}()
	done := ctx.Done()
	for {
		e, ok := h.Next(s, done)
		if !ok {
			select {
			case <-stopped:
				return ErrNotRunning
			default:
				return ctx.Err()
			}
		}
		if err := f(e); err != nil {
			return err
		}
	}
}

// StatusEvent is the first event of a stream: the status the events that
// follow change.
func StatusEvent(st *status.Status, now time.Time) Event {
	return Event{Format: EventFormat, Time: now, Kind: EventStatus, Status: st}
}
