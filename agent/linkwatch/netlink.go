package linkwatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Netlink watches the links of a network namespace with an RTNLGRP_LINK
// subscription made in that namespace.
//
// Netlink is lossy: when the kernel cannot queue an event (ENOBUFS) the
// subscription ends. Any error ends the subscription here too; the watcher
// subscribes again (with a short backoff) and sends a Resync event, after
// which the loop lists every link again. Events are coalesced while the
// loop is busy, so that the watcher keeps draining the socket.
type Netlink struct {
	netns string
	log   logrus.FieldLogger
	// subscribe is netlink.LinkSubscribeWithOptions (replaced in tests).
	subscribe func(ch chan<- netlink.LinkUpdate, done <-chan struct{}, opts netlink.LinkSubscribeOptions) error
}

// NewNetlink returns a watcher of the named namespace ("" = the caller's
// own).
func NewNetlink(netnsName string, log logrus.FieldLogger) *Netlink {
	return &Netlink{
		netns:     netnsName,
		log:       log.WithField("watch", "links"),
		subscribe: netlink.LinkSubscribeWithOptions,
	}
}

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
		err := w.session(ctx, events)
		if ctx.Err() != nil {
			return
		}
		attempt++
		d := resubscribeDelay(attempt)
		w.log.WithError(err).WithField("in", d).Warn("link subscription ended; subscribing again")
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
	}
}

// session is one subscription: it lasts until an error or ctx's end.
func (w *Netlink) session(ctx context.Context, events chan<- Event) error {
	ns, err := w.openNetns()
	if err != nil {
		return err
	}
	defer ns.Close()
	updates := make(chan netlink.LinkUpdate, 64)
	done := make(chan struct{})
	errc := make(chan error, 1)
	err = w.subscribe(updates, done, netlink.LinkSubscribeOptions{
		// No ListExisting: the library sends its dump request to the
		// socket's own address, groups included, so every other link
		// subscriber in the namespace receives it (and reports "Wrong
		// sender portid"). The first event, a Resync, makes the
		// consumer list the links anyway.
		Namespace: &ns,
		ErrorCallback: func(err error) {
			select {
			case errc <- err:
			default:
			}
		},
	})
	if err != nil {
		close(done)
		return fmt.Errorf("subscribing to link events: %w", err)
	}
	defer func() {
		// Closing done closes the socket; the library's reader then
		// closes updates, and must not block sending to it meanwhile.
		close(done)
		go drain(updates)
	}()
	w.log.Debug("subscribed to link events")
	return w.pump(ctx, updates, errc, events)
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

// errSubscriptionClosed: the library closed the update channel (after a
// receive error such as ENOBUFS).
var errSubscriptionClosed = errors.New("link subscription closed")

// pump forwards updates as coalesced events: the send case is on only
// while something is pending (a nil channel otherwise).
func (w *Netlink) pump(ctx context.Context, updates <-chan netlink.LinkUpdate,
	errc <-chan error, events chan<- Event) error {
	pending := Event{Resync: true}
	for {
		var out chan<- Event
		if pending.Resync || len(pending.Names) > 0 {
			out = events
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case out <- pending:
			pending = Event{}
		case u, ok := <-updates:
			if !ok {
				return errSubscriptionClosed
			}
			pending.Names = appendName(pending.Names, u.Attrs().Name)
			w.log.WithFields(logrus.Fields{"link": u.Attrs().Name, "oper": u.Attrs().OperState.String(),
				"flags": u.Attrs().RawFlags}).Debug("link event")
		case err := <-errc:
			return err
		}
	}
}

func appendName(names []string, n string) []string {
	for _, have := range names {
		if have == n {
			return names
		}
	}
	return append(names, n)
}

func drain(updates <-chan netlink.LinkUpdate) {
	for range updates {
	}
}
