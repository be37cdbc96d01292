package agent

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/configurators/dhcp6"
	"github.com/netagent/netagent/items"
)

// LeaseClient6 extends held DHCPv6 leases: dhcp6.Client (the daemon's,
// over the target's Exchanger); tests may fake it.
type LeaseClient6 interface {
	Renew(ctx context.Context, l *dhcp6.Lease) (*dhcp6.Lease, error)
	Rebind(ctx context.Context, l *dhcp6.Lease) (*dhcp6.Lease, error)
}

// lease6State is the loop's part of the DHCPv6 leases, as leaseState is
// of the DHCPv4 ones (leases.go): the leases the intended graph was
// rendered with, the version of dhcp6.Leases they came from, when each is
// next due, and which have an exchange in flight. The lease items'
// configurator acquires leases (SOLICIT-REQUEST, an asynchronous
// operation); the loop renews at T1 (RENEW), rebinds at T2 (REBIND) and
// lets a lease go at the end of its valid lifetime.
type lease6State struct {
	used  map[string]*dhcp6.Lease
	ver   uint64
	due   map[string]time.Time
	busy  map[string]*dhcp6.Lease
	alarm alarm
	// restart: leases let go whose item leaves the current state after
	// the next reconcile (restartLease6).
	restart map[string]bool
}

// lease6Result is the outcome of a RENEW or REBIND.
type lease6Result struct {
	old, got *dhcp6.Lease
	rebind   bool
	err      error
}

// facts6 adds the DHCPv6 leases in use to f: their addresses (valid
// until each lease's end) and DNS, in the interfaces' order.
func (s *lease6State) facts6(f *render.Facts) {
	f.DHCP6, f.LeaseDNS = nil, nil
	for _, name := range slices.Sorted(maps.Keys(s.used)) {
		l := s.used[name]
		if f.DHCP6 == nil {
			f.DHCP6 = map[string]render.Lease6{}
		}
		f.DHCP6[name] = render.Lease6{Address: l.Address, ValidUntil: l.Expires(), PreferredUntil: l.PreferredUntil()}
		f.LeaseDNS = append(f.LeaseDNS, l.LinkDNS())
	}
}

// seedLeases6 starts with the leases the state directory keeps, still
// valid: they are held (read back as such, their addresses rendered), so
// a restart withdraws nothing; the timers renew them at T1 as any other.
func (a *Agent) seedLeases6() {
	s := &a.st.lease6
	s.used, s.due, s.busy, s.restart = map[string]*dhcp6.Lease{}, map[string]time.Time{}, map[string]*dhcp6.Lease{}, map[string]bool{}
	if a.cfg.Leases6 == nil {
		return
	}
	if a.cfg.StateDir != "" {
		for _, l := range dhcp6.KeptLeases(a.cfg.StateDir, time.Now()) {
			a.cfg.Leases6.Set(l)
			a.log.WithFields(lease6Fields(l)).Info("dhcp6: starting with the kept lease")
		}
	}
	held, ver := a.cfg.Leases6.Snapshot()
	s.ver = ver
	for name, l := range held {
		s.used[name] = l
		s.due[name] = l.RenewAt()
	}
}

// syncLeases6 takes in what the lease items' configurator did (a lease
// acquired or let go) and what the timers did (renewed), after a
// reconcile: a lease whose binding or end changed renders the intent
// again, and the timers follow the leases held. A held lease whose
// interface no longer asks for DHCPv6 is forgotten.
func (a *Agent) syncLeases6() {
	if a.cfg.Leases6 == nil {
		return
	}
	a.forgetUnwanted6()
	s := &a.st.lease6
	held, ver := a.cfg.Leases6.Snapshot()
	if ver == s.ver {
		return
	}
	s.ver = ver
	changed := false
	for name, l := range held {
		old := s.used[name]
		if old == l {
			continue
		}
		if old == nil || !old.SameBinding(l) || !old.Expires().Equal(l.Expires()) {
			changed = true
		}
		s.due[name] = l.RenewAt()
		if old == nil {
			a.mx.m.ObserveLease6(name, "acquired")
			a.log.WithFields(lease6Fields(l)).Info("dhcp6: lease acquired")
		}
	}
	for name, old := range s.used {
		if _, ok := held[name]; ok {
			continue
		}
		changed = true
		delete(s.due, name)
		if old.ValidAt(time.Now()) && !s.restart[name] {
			a.mx.m.ObserveLease6(name, "lost")
			a.log.WithField("interface", name).Warn("dhcp6: lease let go (carrier lost or dhcp6 dropped); its address is withdrawn")
		}
	}
	if held == nil {
		held = map[string]*dhcp6.Lease{}
	}
	s.used = held
	a.scheduleLeases6()
	if changed {
		a.rerender(reasonLease)
	}
}

// forgetUnwanted6 forgets the held leases of interfaces whose intent no
// longer has ipv6.dhcp6 and whose lease item is not in the current state
// (a kept lease of a former intent: no item to delete releases it).
func (a *Agent) forgetUnwanted6() {
	s := a.st
	if s.intended == nil || s.current == nil {
		return
	}
	for name := range s.lease6.used {
		ref := items.DHCP6LeaseRef(name)
		if s.intended.Contains(ref) || s.current.Contains(ref) {
			continue
		}
		a.log.WithField("interface", name).Info("dhcp6: forgetting the kept lease of an interface without ipv6.dhcp6")
		a.cfg.Leases6.Drop(name)
		if a.cfg.StateDir != "" {
			dhcp6.DropLease(a.cfg.StateDir, name)
		}
	}
}

// scheduleLeases6 sets the alarm to the soonest due lease (soonestDue).
func (a *Agent) scheduleLeases6() {
	s := &a.st.lease6
	s.alarm.stop()
	if next := soonestDue(s.due, s.used, s.busy); !next.IsZero() {
		s.alarm.set(max(time.Until(next), 0))
	}
}

// leasesDue6 handles the alarm: each lease due renews, rebinds or
// expires (dueAction).
func (a *Agent) leasesDue6(ctx context.Context) {
	s := &a.st.lease6
	now := time.Now()
	for name, at := range s.due {
		l := s.used[name]
		if l == nil {
			continue
		}
		act := dueAction(l, at, s.busy[name] == l, now)
		if act != leaseExpire && act != leaseWait && a.cfg.LeaseClient6 == nil {
			s.due[name] = l.Expires() // nothing extends it: it ends
			continue
		}
		switch act {
		case leaseExpire:
			a.mx.m.ObserveLease6(name, "expired")
			a.log.WithFields(lease6Fields(l)).Warn("dhcp6: lease expired; withdrawing its address, starting over")
			a.restartLease6(name)
		case leaseRenew:
			a.exchange6(ctx, l, false, l.RebindAt())
		case leaseRebind:
			a.exchange6(ctx, l, true, l.Expires())
		}
	}
	a.scheduleLeases6()
}

// exchange6 renews or rebinds l in a goroutine, bounded by the end of
// that state (T2, or the expiry), and posts the outcome to the loop.
func (a *Agent) exchange6(ctx context.Context, l *dhcp6.Lease, rebind bool, until time.Time) {
	a.st.lease6.busy[l.Interface] = l
	state := "renew"
	if rebind {
		state = "rebind"
	}
	a.log.WithFields(lease6Fields(l)).WithField("state", state).Info("dhcp6: extending the lease")
	c := a.cfg.LeaseClient6
	go func() {
		ctx, cancel := context.WithDeadline(ctx, until)
		defer cancel()
		r := lease6Result{old: l, rebind: rebind}
		if rebind {
			r.got, r.err = c.Rebind(ctx, l)
		} else {
			r.got, r.err = c.Renew(ctx, l)
		}
		select {
		case a.lease6Done <- r:
		case <-a.done:
		}
	}()
}

// extended6 takes in the outcome of an exchange: the lease extended
// (kept, held), taken back by the server (let go: acquired afresh), or no
// answer or an unusable one (ErrUnusable: the lease held stays; tried
// again at half the time left: retryAt).
func (a *Agent) extended6(r lease6Result) {
	s := &a.st.lease6
	name := r.old.Interface
	if !stillInUse(name, r.old, s.used, s.busy) {
		a.scheduleLeases6()
		return
	}
	switch {
	case r.err == nil:
		event := extendedEvent(r.rebind)
		a.mx.m.ObserveLease6(name, event)
		a.log.WithFields(lease6Fields(r.got)).Info("dhcp6: lease " + event)
		dhcp6.WarnDropped(a.log, r.got)
		if a.cfg.StateDir != "" {
			if err := dhcp6.SaveLease(a.cfg.StateDir, r.got); err != nil {
				a.log.WithError(err).Warn("dhcp6: keeping the lease")
			}
		}
		a.cfg.Leases6.Set(r.got)
		a.syncLeases6()
		return
	case errors.Is(r.err, dhcp6.ErrRefused) || errors.Is(r.err, dhcp6.ErrNoAddress):
		a.mx.m.ObserveLease6(name, "refused")
		a.log.WithError(r.err).WithField("interface", name).Warn("dhcp6: lease taken back by the server; withdrawing it and starting over")
		a.restartLease6(name)
		return
	}
	next := retryAt(r.old, !r.rebind, time.Now())
	s.due[name] = next
	msg := "dhcp6: no answer; trying again"
	if errors.Is(r.err, dhcp6.ErrUnusable) {
		a.mx.m.ObserveLease6(name, "invalid")
		msg = "dhcp6: the server's answer is unusable; keeping the lease held, trying again"
	}
	a.log.WithError(r.err).WithFields(logrus.Fields{"interface": name, "next": next.Format(time.RFC3339)}).Warn(msg)
	a.scheduleLeases6()
}

// restartLease6 drops the lease held on name: the intent renders without
// its address, and the next reconcile withdraws it; then
// (restartLeases) its item leaves the current state, and the reconcile
// after that acquires a lease again (a SOLICIT), as restartLease does for
// DHCPv4.
func (a *Agent) restartLease6(name string) {
	a.cfg.Leases6.Drop(name)
	if a.cfg.StateDir != "" {
		dhcp6.DropLease(a.cfg.StateDir, name)
	}
	a.st.lease6.restart[name] = true
	a.syncLeases6()
	a.st.want(reasonLease)
}

// lease6Statuses lists the DHCPv6 leases in use, by interface.
func (a *Agent) lease6Statuses() []status.LeaseStatus {
	s := &a.st.lease6
	var out []status.LeaseStatus
	for _, name := range slices.Sorted(maps.Keys(s.used)) {
		l := s.used[name]
		ls := status.LeaseStatus{Interface: name, Family: "ipv6", Address: l.Address.String() + "/128", Server: l.Server,
			Domains: l.Search, Obtained: l.Obtained, Acquired: l.Acquired, RenewAt: l.RenewAt(), RebindAt: l.RebindAt(), Expires: l.Expires(),
			Held: a.cfg.Leases6.Get(name) == l, Dropped: l.Dropped, Refused: a.refusals[items.DHCP6LeaseRef(name)]}
		for _, d := range l.DNS {
			ls.DNS = append(ls.DNS, d.String())
		}
		out = append(out, ls)
	}
	return out
}

func lease6Fields(l *dhcp6.Lease) logrus.Fields {
	return logrus.Fields{"interface": l.Interface, "address": l.Address.String(), "server": l.Server, "dns": l.DNS,
		"renew": l.RenewAt().Format(time.RFC3339), "expires": l.Expires().Format(time.RFC3339)}
}
