package lease

import (
	"context"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
)

// Lease is what the scheduler needs of a lease of either family (a
// *lease4.Lease, a *dhcp6.Lease): its times, and whether another is the
// same binding. A lease is never changed in place: a renewal is a new one.
type Lease[L any] interface {
	comparable
	RenewAt() time.Time
	RebindAt() time.Time
	Expires() time.Time
	ValidAt(now time.Time) bool
	SameBinding(other L) bool
}

// Book is where a family's lease items' configurator holds the leases it
// acquired (dhcp.Leases, dhcp6.Leases: leasebook.Book).
type Book[L any] interface {
	Get(ifname string) L
	Set(l L)
	Drop(ifname string)
	Snapshot() (map[string]L, uint64)
}

// Exchange renews (or, rebind, rebinds) l with a server, until ctx ends.
// It runs off the loop goroutine.
type Exchange[L any] func(ctx context.Context, l L, rebind bool) (L, error)

// Family is one protocol's part of the scheduler (V4, V6): everything the
// rules need that differs between DHCPv4 and DHCPv6.
type Family[L Lease[L]] interface {
	// Info names the family's lease items and its words in logs.
	Info() Info
	// Exchanger returns how to extend the lease of ifname, with what the
	// intended graph asks of its exchanges (read on the loop goroutine);
	// nil when nothing extends leases (no client): a lease then ends at
	// its expiry.
	Exchanger(intended *dg.Graph, ifname string) Exchange[L]
	// HoldsKept: the leases the state directory keeps are held at start
	// (and renewed at T1), not asked for again.
	HoldsKept() bool
	// Acquired reports whether l, taken in from the book in place of old
	// (the zero L: none), is a lease acquired (not a renewal).
	Acquired(old, l L) bool
	// Refused: the server refused the lease or took it back (a NAK).
	Refused(err error) bool
	// Unusable: the server answered with a lease no host can take.
	Unusable(err error) bool
	Kept(dir string, now time.Time) map[string]L
	Save(dir string, l L) error
	Forget(dir, ifname string)
	// WarnDropped logs what of the server's answer l does not use.
	WarnDropped(log logrus.FieldLogger, l L)
	Fields(l L) logrus.Fields
	// Row is l's status row, but for what the scheduler knows (the
	// interface, its times, held, the last error, refused).
	Row(l L) status.LeaseStatus
}

// Info names a family's lease items and its words in logs.
type Info struct {
	Ref         func(ifname string) dg.ItemRef // the lease item of ifname
	Name        string                         // the family in logs: "dhcp4"
	Option      string                         // what the intent asks on an interface: "dhcp4"
	Withdrawing string                         // what a lease gives: "its address and routes"
	Withdrawn   string                         // "its address and routes are withdrawn"
	Refused     string                         // "lease refused"
}

// Graphs are the loop's graphs the rules read: the intended one (what an
// exchange asks, which lease items the intent has) and the current one
// (which lease items are being acquired or held).
type Graphs struct {
	Intended, Current *dg.Graph
}

// Changes is what a call asks of the caller.
type Changes struct {
	// Rerender: the leases in use changed; render the intent again.
	Rerender bool
	// Reconcile: a lease was let go; reconcile (TakeRestarts after it).
	Reconcile bool
}

// Or returns the changes of both.
func (c Changes) Or(d Changes) Changes {
	return Changes{Rerender: c.Rerender || d.Rerender, Reconcile: c.Reconcile || d.Reconcile}
}

// Config is the scheduler's wiring.
type Config struct {
	StateDir string // "": leases are not kept
	Log      logrus.FieldLogger
	// Observe counts a lease event on an interface (metrics): acquired,
	// renewed, rebound, refused, invalid, expired, lost.
	Observe func(ifname, event string)
	// Reports is where the exchanges post their outcome; Stop, closed when
	// the loop ends, drops an outcome nobody takes.
	Reports chan<- Report
	Stop    <-chan struct{}
}
