package linkwatch

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/vishvananda/netns"
)

// fakeSockets plays openLinkSocket: each call is a subscription the test
// feeds names, overflows or errors.
type fakeSockets struct {
	made chan *fakeSocket
}

type fakeSocket struct {
	in     chan batch
	closed chan struct{}
	rcvbuf int
}

func (s *fakeSocket) receive() ([]string, error) {
	select {
	case b := <-s.in:
		return b.names, b.err
	case <-s.closed:
		return nil, errors.New("use of closed socket")
	}
}

func (s *fakeSocket) close() { close(s.closed) }

func (f *fakeSockets) open(_ netns.NsHandle, rcvbuf int) (linkSocket, error) {
	s := &fakeSocket{in: make(chan batch), closed: make(chan struct{}), rcvbuf: rcvbuf}
	f.made <- s
	return s, nil
}

func newTestWatcher() (*Netlink, *fakeSockets) {
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	w := NewNetlink("", log)
	f := &fakeSockets{made: make(chan *fakeSocket, 10)}
	w.open = f.open
	return w, f
}

func isClosed(s *fakeSocket) bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

func TestNetlinkResyncsAfterOverflowAndResubscribesAfterError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, f := newTestWatcher()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		events := make(chan Event)
		go w.Watch(ctx, events)

		sock := <-f.made
		if sock.rcvbuf != ReceiveBuffer {
			t.Errorf("receive buffer %d, want %d", sock.rcvbuf, ReceiveBuffer)
		}
		if ev := <-events; !ev.Resync {
			t.Fatalf("first event %+v, want a resync", ev)
		}
		sock.in <- batch{names: []string{"uplink0"}}
		if ev := <-events; ev.Resync || len(ev.Names) != 1 || ev.Names[0] != "uplink0" {
			t.Errorf("event %+v", ev)
		}

		// ENOBUFS: notifications were dropped; the same socket goes on
		// and the consumer is told to list every link.
		sock.in <- batch{err: errOverflow}
		if ev := <-events; !ev.Resync {
			t.Errorf("after an overflow: %+v, want a resync", ev)
		}
		sock.in <- batch{names: []string{"uplink1"}}
		if ev := <-events; ev.Resync || len(ev.Names) != 1 || ev.Names[0] != "uplink1" {
			t.Errorf("event after the overflow %+v", ev)
		}
		select {
		case s := <-f.made:
			t.Fatalf("an overflow made a new subscription %p", s)
		default:
		}

		// Any other error: a new subscription and a resync.
		sock.in <- batch{err: errors.New("receiving link notifications: EIO")}
		sock2 := <-f.made
		if ev := <-events; !ev.Resync {
			t.Errorf("after re-subscribing: %+v, want a resync", ev)
		}
		if !isClosed(sock) {
			t.Error("the old subscription was not closed")
		}
		cancel()
		synctest.Wait()
		if !isClosed(sock2) {
			t.Error("the subscription outlived Watch")
		}
	})
}

// TestNetlinkBackoffResetsAfterDelivery: the resubscribe backoff grows
// only over subscriptions that fail in a row. A daemon whose subscription
// broke now and then over its life must not stay blind for the longest
// delay (3.75 s) each time.
func TestNetlinkBackoffResetsAfterDelivery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, f := newTestWatcher()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		events := make(chan Event, 100)
		go w.Watch(ctx, events)
		sock := <-f.made
		for range 10 {
			sock.in <- batch{names: []string{"uplink0"}}
			sock.in <- batch{err: errors.New("receiving link notifications: EIO")}
			start := time.Now()
			sock = <-f.made
			if d := time.Since(start); d > resubscribeBase {
				t.Fatalf("resubscribed after %v, want %v: a subscription that worked resets the backoff", d, resubscribeBase)
			}
		}
		// Subscriptions that fail in a row back off: 150 ms, then 300 ms.
		for _, want := range []time.Duration{2 * resubscribeBase, 4 * resubscribeBase} {
			start := time.Now()
			sock.in <- batch{err: errors.New("EIO")}
			sock = <-f.made
			if d := time.Since(start); d != want {
				t.Errorf("failing in a row: resubscribed after %v, want %v", d, want)
			}
		}
	})
}

// TestNetlinkCoalesces: while the loop does not take events, the
// watcher keeps reading the subscription and merges what it reads.
func TestNetlinkCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, f := newTestWatcher()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		events := make(chan Event)
		go w.Watch(ctx, events)
		sock := <-f.made
		for i := range 100 {
			name := "a"
			if i%2 == 1 {
				name = "b"
			}
			sock.in <- batch{names: []string{name}} // never blocks for long: the watcher drains
		}
		synctest.Wait()
		ev := <-events
		if !ev.Resync || len(ev.Names) != 2 {
			t.Errorf("coalesced event %+v, want a resync naming a and b", ev)
		}
		select {
		case ev := <-events:
			t.Errorf("a second event %+v", ev)
		case <-time.After(time.Second):
		}
	})
}
