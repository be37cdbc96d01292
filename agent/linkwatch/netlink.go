package linkwatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/vishvananda/netns"
)

// Netlink watches the links of a network namespace with an RTNLGRP_LINK
// subscription made in that namespace.
//
// Netlink is lossy: when the socket's receive buffer is full the kernel
// drops notifications and the next read fails with ENOBUFS. The socket
// stays usable, so the watcher keeps it and sends a Resync event at once:
// the consumer lists every link again, which shows whatever the dropped
// notifications said. Any other error ends the subscription; the watcher
// subscribes again (with a short backoff, reset by a subscription that
// delivered) and sends a Resync. Events are coalesced while the consumer is
// busy, so that the watcher keeps draining the socket; it reads only the
// link's name of each notification, not the whole link.
type Netlink struct {
	netns string
	log   logrus.FieldLogger
	// what the subscription is about, for the log ("link", "owned object").
	what string
	// rcvbuf is the socket's receive buffer in bytes.
	rcvbuf int
	// open subscribes in ns (openLinkSocket; replaced in tests).
	open func(ns netns.NsHandle, rcvbuf int) (linkSocket, error)
}

// ReceiveBuffer is the receive buffer of a subscription: room for the
// notifications of a few thousand link changes (one is about 1.5 KB), so
// that a large apply does not overflow it while the consumer is busy. The
// kernel uses it only while notifications are queued.
const ReceiveBuffer = 4 << 20

// NewNetlink returns a watcher of the named namespace ("" = the caller's
// own).
func NewNetlink(netnsName string, log logrus.FieldLogger) *Netlink {
	return &Netlink{
		netns:  netnsName,
		log:    log.WithField("watch", "links"),
		what:   "link",
		rcvbuf: ReceiveBuffer,
		open:   openLinkSocket,
	}
}

// linkSocket is one subscription.
type linkSocket interface {
	// receive blocks for the next notifications and returns the names of
	// their links; errOverflow when the kernel dropped some.
	receive() ([]string, error)
	// close ends the subscription; a blocked receive returns.
	close()
}

// errOverflow: the socket's receive buffer overflowed (ENOBUFS) and the
// kernel dropped notifications; the socket still works.
var errOverflow = errors.New("link notifications dropped (receive buffer full)")

// Resubscribe delays: 75 ms after the first failure, doubling up to 3.75 s.
const (
	resubscribeBase  = 75 * time.Millisecond
	resubscribeLimit = 3750 * time.Millisecond
)

// resubscribeDelay is the wait before subscription number attempt+1.
func resubscribeDelay(attempt int) time.Duration {
	d := resubscribeBase
	for i := 1; i < attempt && d < resubscribeLimit; i++ {
		d *= 2
	}
	return min(d, resubscribeLimit)
}

// Watch sends link events until ctx ends. The first event, a Resync, says
// that the subscription is made: a change after it is not missed.
func (w *Netlink) Watch(ctx context.Context, events chan<- Event) {
	attempt := 0
	for ctx.Err() == nil {
		delivered, err := w.session(ctx, events)
		if ctx.Err() != nil {
			return
		}
		if delivered {
			attempt = 0 // the subscription worked: back off afresh
		}
		attempt++
		d := resubscribeDelay(attempt)
		w.log.WithError(err).WithField("in", d).Warn(w.what + " subscription ended; subscribing again")
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
	}
}

// batch is what the reader passes to the pump: the names of one read, or
// its error.
type batch struct {
	names []string
	err   error
}

// session is one subscription: it lasts until an error (other than an
// overflow) or ctx's end. delivered says that it read something.
func (w *Netlink) session(ctx context.Context, events chan<- Event) (delivered bool, err error) {
	ns, err := w.openNetns()
	if err != nil {
		return false, err
	}
	defer ns.Close()
	sock, err := w.open(ns, w.rcvbuf)
	if err != nil {
		return false, fmt.Errorf("subscribing to %s events: %w", w.what, err)
	}
	batches := make(chan batch, 16)
	done := make(chan struct{})
	go read(sock, batches, done)
	defer func() {
		close(done)
		sock.close() // the reader's receive returns; it then ends
	}()
	w.log.Debug("subscribed to " + w.what + " events")
	return w.pump(ctx, batches, events)
}

// read receives until an error other than an overflow, or done.
func read(sock linkSocket, batches chan<- batch, done <-chan struct{}) {
	for {
		names, err := sock.receive()
		select {
		case batches <- batch{names: names, err: err}:
		case <-done:
			return
		}
		if err != nil && !errors.Is(err, errOverflow) {
			return
		}
	}
}

func (w *Netlink) openNetns() (netns.NsHandle, error) {
	if w.netns == "" {
		return netns.Get()
	}
	ns, err := netns.GetFromName(w.netns)
	if err != nil {
		return ns, fmt.Errorf("opening network namespace %q: %w", w.netns, err)
	}
	return ns, nil
}

// pump forwards batches as coalesced events: the send case is on only
// while something is pending (a nil channel otherwise). An overflow makes
// the pending event a Resync.
func (w *Netlink) pump(ctx context.Context, batches <-chan batch, events chan<- Event) (delivered bool, err error) {
	pending := Event{Resync: true}
	named := map[string]struct{}{} // pending.Names as a set
	for {
		var out chan<- Event
		if pending.Resync || len(pending.Names) > 0 {
			out = events
		}
		select {
		case <-ctx.Done():
			return delivered, ctx.Err()
		case out <- pending:
			pending = Event{}
			clear(named)
		case b := <-batches:
			switch {
			case errors.Is(b.err, errOverflow):
				w.log.Info(w.what + " notifications dropped; resynchronising")
				pending.Resync = true
			case b.err != nil:
				return delivered, b.err
			}
			delivered = true
			for _, n := range b.names {
				if _, ok := named[n]; !ok {
					named[n] = struct{}{}
					pending.Names = append(pending.Names, n)
				}
			}
		}
	}
}
