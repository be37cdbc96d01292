package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// NetlinkWatcher watches the links of a network namespace with an
// RTNLGRP_LINK subscription made in that namespace.
//
// Netlink is lossy: when the kernel cannot queue an event (ENOBUFS) the
// subscription ends. Any error ends the subscription here too; the watcher
// subscribes again (with a short backoff) and sends a Resync event, after
// which the loop lists every link again. Events are coalesced while the
// loop is busy, so that the watcher keeps draining the socket.
type NetlinkWatcher struct {
	netns string
	log   logrus.FieldLogger
	// subscribe is netlink.LinkSubscribeWithOptions (replaced in tests).
	subscribe func(ch chan<- netlink.LinkUpdate, done <-chan struct{}, opts netlink.LinkSubscribeOptions) error
	backoff   backoff
}

// NewNetlinkWatcher returns a watcher of the named namespace ("" = the
// agent's own).
func NewNetlinkWatcher(netnsName string, log logrus.FieldLogger) *NetlinkWatcher {
	return &NetlinkWatcher{
		netns:     netnsName,
		log:       log.WithField("watch", "links"),
		subscribe: netlink.LinkSubscribeWithOptions,
		backoff:   backoff{base: 100 * time.Millisecond, limit: 5 * time.Second, rand: func() float64 { return 0.5 }},
	}
}

// Watch sends link events until ctx ends.
func (w *NetlinkWatcher) Watch(ctx context.Context, events chan<- LinkEvent) {
	attempt := 0
	for ctx.Err() == nil {
		err := w.session(ctx, events)
		if ctx.Err() != nil {
			return
		}
		attempt++
		d := w.backoff.delay(attempt)
		w.log.WithError(err).WithField("in", d).Warn("link subscription ended; subscribing again")
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
	}
}

// session is one subscription: it lasts until an error or ctx's end.
func (w *NetlinkWatcher) session(ctx context.Context, events chan<- LinkEvent) error {
	ns, err := w.openNetns()
	if err != nil {
		return err
	}
	defer ns.Close()
	updates := make(chan netlink.LinkUpdate, 64)
	done := make(chan struct{})
	errc := make(chan error, 1)
	err = w.subscribe(updates, done, netlink.LinkSubscribeOptions{
		Namespace:    &ns,
		ListExisting: true,
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

func (w *NetlinkWatcher) openNetns() (netns.NsHandle, error) {
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
func (w *NetlinkWatcher) pump(ctx context.Context, updates <-chan netlink.LinkUpdate,
	errc <-chan error, events chan<- LinkEvent) error {
	pending := LinkEvent{Resync: true}
	for {
		var out chan<- LinkEvent
		if pending.Resync || len(pending.Names) > 0 {
			out = events
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case out <- pending:
			pending = LinkEvent{}
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
