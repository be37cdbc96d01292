package api

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A subscriber that does not read gets what its buffer holds, then one
// EventMissed with the number of the events dropped, then what follows.
func TestHubCountsMissedEvents(t *testing.T) {
	h := NewHub()
	s := NewSubscriber(2)
	h.Add(s)
	ev := func(item string) Event { return Event{Format: EventFormat, Kind: EventItem, Item: item} }
	h.Publish([]Event{ev("a"), ev("b"), ev("c"), ev("d")})
	h.Publish([]Event{ev("e")})
	var got []string
	for range 3 {
		e, ok := h.Next(s, nil)
		if !ok {
			t.Fatal("next: not ok")
		}
		got = append(got, e.Kind+":"+e.Item)
		if e.Kind == EventMissed && e.Missed != 3 {
			t.Errorf("missed %d, want 3", e.Missed)
		}
	}
	if want := "item:a item:b missed:"; got[0]+" "+got[1]+" "+got[2] != want {
		t.Errorf("events read %v, want %s", got, want)
	}
	h.Publish([]Event{ev("f")})
	if e, _ := h.Next(s, nil); e.Item != "f" {
		t.Errorf("after the gap: %+v", e)
	}
	done := make(chan struct{})
	close(done)
	if _, ok := h.Next(s, done); ok {
		t.Error("next with nothing to read and done closed: ok")
	}
	h.Remove(s)
	if h.Count() != 0 {
		t.Errorf("%d subscribers after Remove", h.Count())
	}
}

// Stream ends with ErrNotRunning when the daemon stops, with ctx's error
// when ctx ends, and with f's error when f fails.
func TestHubStreamEnds(t *testing.T) {
	h := NewHub()
	stopped := make(chan struct{})
	s := NewSubscriber(WatchBuffer)
	h.Add(s)
	h.Publish([]Event{{Kind: EventReady}})
	boom := errors.New("boom")
	if err := h.Stream(context.Background(), s, stopped, func(Event) error { return boom }); err != boom {
		t.Errorf("Stream with a failing f: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := h.Stream(ctx, s, stopped, func(Event) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stream after ctx ended: %v", err)
	}
	close(stopped)
	if err := h.Stream(context.Background(), s, stopped, func(Event) error { return nil }); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Stream after the daemon stopped: %v", err)
	}
}
