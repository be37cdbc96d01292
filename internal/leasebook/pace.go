package leasebook

import (
	"context"
	"sync"
	"time"
)

// The pace of a DHCP client's exchanges on one interface (Pacer): at
// least PaceMin apart, whatever a server's times say; after a failed one
// (a NAK, an answer that cannot be used) PaceFail, doubling with each
// failure in a row up to PaceMax. systemd-networkd restarts after a NAK
// from 1 s doubling to 30 min, dhcpcd doubles up to 60 s.
const (
	PaceMin  = time.Second
	PaceFail = 2 * time.Second
	PaceMax  = 5 * time.Minute
)

// Pacer spaces the exchanges of a client (DHCPv4 or DHCPv6) on each
// interface, for the daemon's renewals and the lease items' acquisitions
// alike, so that no server's answer (a T1 of 0, a NAK to each REQUEST)
// makes the client storm. The zero value is ready; it is safe for
// concurrent use.
type Pacer struct {
	mu    sync.Mutex
	next  map[string]time.Time // the earliest start of the next exchange
	fails map[string]int       // failures in a row
}

// Wait returns when an exchange on ifname may start (at once, or at the
// slot after the last one's), or ctx's error if it ends first. The slot is
// taken: a second caller waits for the one after.
func (p *Pacer) Wait(ctx context.Context, ifname string) error {
	p.mu.Lock()
	if p.next == nil {
		p.next, p.fails = map[string]time.Time{}, map[string]int{}
	}
	now := time.Now()
	start := later(p.next[ifname], now)
	p.next[ifname] = start.Add(PaceMin)
	p.mu.Unlock()
	if !start.After(now) {
		return nil
	}
	t := time.NewTimer(start.Sub(now))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Done records how an exchange on ifname ended: failed puts the next one
// PaceFail·2^(n-1) later for the n-th failure in a row (at most PaceMax);
// any other outcome starts the count again.
func (p *Pacer) Done(ifname string, failed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next == nil {
		p.next, p.fails = map[string]time.Time{}, map[string]int{}
	}
	if !failed {
		delete(p.fails, ifname)
		return
	}
	p.fails[ifname]++
	p.next[ifname] = later(p.next[ifname], time.Now().Add(failDelay(p.fails[ifname])))
}

// failDelay is the wait after the n-th failure in a row.
func failDelay(n int) time.Duration {
	d := PaceFail
	for i := 1; i < n && d < PaceMax; i++ {
		d *= 2
	}
	return min(d, PaceMax)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
