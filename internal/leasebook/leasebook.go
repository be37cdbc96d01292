// Package leasebook is the book of DHCP leases held, one per interface,
// that a lease configurator (configurators/dhcp, configurators/dhcp6)
// writes when it acquires a lease and the daemon when it renews or lets
// one go; render reads a snapshot. Version counts the changes, so that a
// reader sees at a glance whether it has the latest. It is safe for
// concurrent use. Pacer (pace.go) is the clients' other shared part: the
// pace of their exchanges on each interface, whatever a server answers.
package leasebook

import (
	"maps"
	"sync"
)

// Book holds the lease L of each interface.
type Book[L comparable] struct {
	mu  sync.Mutex
	m   map[string]L
	ver uint64
	// noKept: the daemon reads only the leases held, not those the state
	// directory keeps (IgnoreKept).
	noKept bool
}

// Get returns the lease held on ifname, the zero L if none.
func (b *Book[L]) Get(ifname string) L {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m[ifname]
}

// Snapshot returns the leases held, by interface, and the version.
func (b *Book[L]) Snapshot() (map[string]L, uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.m), b.ver
}

// Version returns the number of changes so far.
func (b *Book[L]) Version() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ver
}

// Hold holds l on ifname (a lease is never changed in place: a renewal
// is a new lease).
func (b *Book[L]) Hold(ifname string, l L) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]L{}
	}
	b.m[ifname] = l
	b.ver++
}

// Drop forgets the lease held on ifname.
func (b *Book[L]) Drop(ifname string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.m[ifname]; ok {
		delete(b.m, ifname)
		b.ver++
	}
}

// IgnoreKept tells the configurator's read-back to read only the leases
// held, not those the state directory keeps: the daemon, after its first
// read-back, knows which leases it holds (a lease kept through a carrier
// loss is one it let go).
func (b *Book[L]) IgnoreKept() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.noKept = true
}

// IgnoresKept reports whether IgnoreKept was called.
func (b *Book[L]) IgnoresKept() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.noKept
}
