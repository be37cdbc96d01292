// Package linkwatch says when the links of a network namespace may have
// changed: the daemon's loop (package agent) and the one-shot apply
// (package host, which waits for the link events its own changes
// cause) both use it.
//
// An Event only says "look again", and which links, for the log: netlink
// is lossy, so a consumer lists the links again after an event rather than
// trusting its details. Netlink is the Watcher over an RTNLGRP_LINK
// subscription made in the target namespace: its first event (a Resync)
// comes once the subscription is made, so that a consumer that waits for
// it before changing the kernel misses no event those changes cause.
//
// Its socket has a 4 MiB receive buffer (ReceiveBuffer). When that
// overflows anyway (ENOBUFS: the kernel dropped notifications, a carrier
// change among them perhaps) it keeps the socket and sends a Resync at
// once, and the consumer's listing shows what the dropped notifications
// said. After any other error it subscribes again, with a backoff that a
// subscription which delivered resets, and sends another Resync. It reads
// only the link name of each notification.
//
// NewOwned is the same watcher over netagent's own routes, addresses and
// neighbours: its subscription's socket carries a classic BPF filter
// (SO_ATTACH_FILTER) that drops in the kernel every route, address and
// neighbour notification without netagent's protocol mark, so that another
// owner's full routing table, however busy, never wakes it.
package linkwatch

import "context"

// Watcher reports link changes in a namespace.
type Watcher interface {
	// Watch sends events until ctx ends. It handles its own errors: when
	// its subscription fails or overflows, it subscribes again and sends an
	// event with Resync set.
	Watch(ctx context.Context, events chan<- Event)
}

// Event says that links may have changed.
type Event struct {
	Names []string
	// Resync: the watcher (re)subscribed, events may have been lost.
	Resync bool
}
