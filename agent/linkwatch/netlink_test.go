package linkwatch

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/vishvananda/netlink"
)

// fakeSubscriptions plays netlink.LinkSubscribeWithOptions: each call is a
// subscription the test feeds, ends (as the library does after ENOBUFS,
// by closing the channel) or breaks (through the error callback).
type fakeSubscriptions struct {
	mu   sync.Mutex
	subs []*fakeSub
	made chan *fakeSub
}

type fakeSub struct {
	ch   chan<- netlink.LinkUpdate
	done <-chan struct{}
	opts netlink.LinkSubscribeOptions
	once sync.Once
}

// close ends the subscription as the library does: by closing ch.
func (s *fakeSub) close() { s.once.Do(func() { close(s.ch) }) }

func (f *fakeSubscriptions) subscribe(ch chan<- netlink.LinkUpdate, done <-chan struct{}, opts netlink.LinkSubscribeOptions) error {
	s := &fakeSub{ch: ch, done: done, opts: opts}
	go func() {
		<-done // the library closes the socket, its reader then closes ch
		s.close()
	}()
	f.mu.Lock()
	f.subs = append(f.subs, s)
	f.mu.Unlock()
	f.made <- s
	return nil
}

func update(name string) netlink.LinkUpdate {
	return netlink.LinkUpdate{Link: &netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: name}}}
}

func newTestWatcher() (*Netlink, *fakeSubscriptions) {
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	w := NewNetlink("", log)
	f := &fakeSubscriptions{made: make(chan *fakeSub, 10)}
	w.subscribe = f.subscribe
	return w, f
}

func TestNetlinkResubscribesAndResyncs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, f := newTestWatcher()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		events := make(chan Event)
		go w.Watch(ctx, events)

		sub := <-f.made
		if sub.opts.ListExisting || sub.opts.Namespace == nil || sub.opts.ErrorCallback == nil {
			t.Fatalf("subscription options %+v", sub.opts)
		}
		if ev := <-events; !ev.Resync {
			t.Fatalf("first event %+v, want a resync", ev)
		}
		sub.ch <- update("uplink0")
		if ev := <-events; ev.Resync || len(ev.Names) != 1 || ev.Names[0] != "uplink0" {
			t.Errorf("event %+v", ev)
		}

		// ENOBUFS: the library reports it and closes the channel.
		sub.opts.ErrorCallback(errors.New("Receive failed: no buffer space available"))
		sub.close()
		sub2 := <-f.made
		if ev := <-events; !ev.Resync {
			t.Errorf("after re-subscribing: %+v, want a resync", ev)
		}
		select {
		case <-sub.done:
		default:
			t.Error("the old subscription was not closed")
		}

		// An error through the callback alone also re-subscribes.
		sub2.opts.ErrorCallback(netlink.ErrDumpInterrupted)
		<-f.made
		if ev := <-events; !ev.Resync {
			t.Errorf("after an error callback: %+v, want a resync", ev)
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
		sub := <-f.made
		for i := range 100 {
			name := "a"
			if i%2 == 1 {
				name = "b"
			}
			sub.ch <- update(name) // never blocks for long: the watcher drains
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
