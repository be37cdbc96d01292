package agent

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/configurators/dhcp"
	"github.com/netagent/netagent/configurators/dhcp6"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/items/lease4"
	"github.com/netagent/netagent/reconciler"
)

// reasonLease: a DHCPv4 lease was acquired, changed, expired or let go.
const reasonLease = "lease"

// LeaseClient extends held leases: dhcp.Client (the daemon's, over the
// target's Exchanger); tests may fake it.
type LeaseClient interface {
	Renew(ctx context.Context, l *lease4.Lease, o dhcp.Options) (*lease4.Lease, error)
	Rebind(ctx context.Context, l *lease4.Lease, o dhcp.Options) (*lease4.Lease, error)
}

// leaseState is the loop's part of the DHCPv4 leases (leases.go): the
// leases the intended graph was rendered with, the version of dhcp.Leases
// they came from, when each is next due for an exchange, and which have
// one in flight. The lease items' configurator acquires leases (an
// asynchronous operation of the reconciler); the loop owns every timer
// after that: renewing at T1, rebinding at T2, letting the lease go when it
// expires. The exchanges run in goroutines that post their outcome back
// (Agent.leaseDone).
type leaseState struct {
	used  map[string]*lease4.Lease
	ver   uint64
	due   map[string]time.Time     // the next exchange (or the expiry) of each held lease
	busy  map[string]*lease4.Lease // the lease an exchange in flight extends
	alarm alarm
	// restart: leases let go whose item leaves the current state after
	// the next reconcile (restartLease).
	restart map[string]bool
	// kept: the leases the state directory kept at start that no server
	// has confirmed yet (their items ask again): in use while their item
	// is, until they expire.
	kept map[string]bool
	// lastError: why the last exchange on each lease failed (status),
	// until one succeeds.
	lastError map[string]string
}

// leaseResult is the outcome of a renewal or rebinding.
type leaseResult struct {
	old, got *lease4.Lease
	how      string // dhcp.ObtainedRenew or ObtainedRebind
	err      error
}

// leaseFacts returns the facts render needs for files: the host's
// (Config.Facts) and the leases in use, of both families.
func (a *Agent) leaseFacts(files map[string]*intent.Intent) render.Facts {
	var f render.Facts
	if a.cfg.Facts != nil {
		f = a.cfg.Facts(files)
	}
	if a.st != nil {
		f.Leases = a.st.lease.used
		if a.cfg.Leases6 != nil {
			a.st.lease6.facts6(&f)
		}
	}
	return f
}

// seedLeases starts with the leases the state directory keeps, still
// valid: the first render keeps their addresses and routes intended while
// the lease items ask the servers again (INIT-REBOOT), so that a restart
// withdraws nothing.
func (a *Agent) seedLeases() {
	s := &a.st.lease
	s.due, s.busy, s.restart, s.kept = map[string]time.Time{}, map[string]*lease4.Lease{}, map[string]bool{}, map[string]bool{}
	s.lastError = map[string]string{}
	if a.cfg.Leases == nil || a.cfg.StateDir == "" {
		return
	}
	s.used = dhcp.KeptLeases(a.cfg.StateDir, time.Now())
	for name, l := range s.used {
		s.kept[name] = true
		s.due[name] = l.Expires()
		a.log.WithFields(leaseFields(l)).Info("dhcp4: starting with the kept lease; asking the server again")
	}
	_, s.ver = a.cfg.Leases.Snapshot()
}

// syncLeases takes in what the lease items' configurator did (a lease
// acquired, confirmed or let go), after a reconcile: a lease whose binding
// or expiry changed renders the intent again (its address and routes; a
// renewal refreshes the address's lifetime in the kernel), and the
// renewal timers follow the leases held.
func (a *Agent) syncLeases() {
	if a.cfg.Leases == nil {
		return
	}
	s := &a.st.lease
	held, ver := a.cfg.Leases.Snapshot()
	if ver == s.ver {
		return
	}
	s.ver = ver
	if held == nil {
		held = map[string]*lease4.Lease{}
	}
	a.stillKept(held)
	changed := false
	for name, l := range held {
		old := s.used[name]
		if old == l {
			continue
		}
		if old == nil || !old.SameBinding(l) || !old.Expires().Equal(l.Expires()) {
			changed = true // a new binding, or a new end: its address's lifetime
		}
		if s.kept[name] {
			continue // still being asked for: due at its expiry (seedLeases)
		}
		s.due[name] = l.RenewAt()
		if l.Obtained == dhcp.ObtainedDiscover || l.Obtained == dhcp.ObtainedReboot {
			a.mx.m.ObserveLease(name, "acquired")
			a.log.WithFields(leaseFields(l)).Info("dhcp4: lease acquired")
		}
	}
	for name, old := range s.used {
		if _, ok := held[name]; !ok {
			changed = true
			delete(s.due, name)
			if !old.ValidAt(time.Now()) {
				continue // expired: counted and logged by expire
			}
			if s.restart[name] {
				continue // refused: counted and logged by extended
			}
			a.mx.m.ObserveLease(name, "lost")
			a.log.WithField("interface", name).Warn("dhcp4: lease let go (carrier lost or dhcp4 dropped); its address and routes are withdrawn")
		}
	}
	s.used = held
	a.scheduleLeases()
	if changed {
		a.rerender(reasonLease)
	}
}

// stillKept adds to held the kept leases still waiting for their server's
// answer: their item is in the current state (being asked for again) and
// they have not expired. A kept lease that a server confirmed, or whose
// item went, is kept no more.
func (a *Agent) stillKept(held map[string]*lease4.Lease) {
	s := &a.st.lease
	now := time.Now()
	for name := range s.kept {
		l := s.used[name]
		_, confirmed := held[name]
		if !confirmed && l != nil && l.ValidAt(now) && a.st.current.Contains(items.DHCP4LeaseRef(name)) {
			held[name] = l
			continue
		}
		delete(s.kept, name)
	}
}

// scheduleLeases sets the alarm to the soonest due lease (soonestDue).
func (a *Agent) scheduleLeases() {
	s := &a.st.lease
	s.alarm.stop()
	if next := soonestDue(s.due, s.used, s.busy); !next.IsZero() {
		s.alarm.set(max(time.Until(next), 0))
	}
}

// leaseTimes is what the timers need of a lease of either family.
type leaseTimes interface {
	RebindAt() time.Time
	Expires() time.Time
}

// soonestDue returns when the soonest of the leases due is: its next
// exchange, or, while one is in flight, its expiry (an exchange that
// hangs never keeps a lease past its end); zero when none is.
func soonestDue[L interface {
	comparable
	leaseTimes
}](due map[string]time.Time, used, busy map[string]L) time.Time {
	var next time.Time
	var none L
	for name, at := range due {
		if l := used[name]; l != none && busy[name] == l {
			at = l.Expires()
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next
}

// leaseAction is what a lease due needs (dueAction).
type leaseAction int

const (
	leaseWait   leaseAction = iota // not yet, or an exchange is in flight
	leaseExpire                    // its end has come
	leaseRenew                     // with its server, before T2
	leaseRebind                    // with any server, before its end
)

// dueAction returns what l, due at at, needs at now; busy: an exchange on
// it is in flight (whose outcome is ignored when it expires meanwhile).
func dueAction(l leaseTimes, at time.Time, busy bool, now time.Time) leaseAction {
	switch {
	case !now.Before(l.Expires()):
		return leaseExpire
	case busy || at.After(now):
		return leaseWait
	case now.Before(l.RebindAt()):
		return leaseRenew
	}
	return leaseRebind
}

// leasesDue handles the alarm: each lease due renews (before T2),
// rebinds (before its expiry) or expires, the last also with an exchange
// in flight (whose outcome is then ignored).
func (a *Agent) leasesDue(ctx context.Context) {
	s := &a.st.lease
	now := time.Now()
	for name, at := range s.due {
		l := s.used[name]
		if l == nil {
			continue
		}
		act := dueAction(l, at, s.busy[name] == l, now)
		if act != leaseExpire && act != leaseWait && a.cfg.LeaseClient == nil {
			s.due[name] = l.Expires() // nothing extends it: it ends
			continue
		}
		switch act {
		case leaseExpire:
			a.expire(l)
		case leaseRenew:
			a.exchange(ctx, l, dhcp.ObtainedRenew, l.RebindAt())
		case leaseRebind:
			a.exchange(ctx, l, dhcp.ObtainedRebind, l.Expires())
		}
	}
	a.scheduleLeases()
}

// exchange renews or rebinds l in a goroutine, bounded by the end of
// that state (T2, or the expiry), and posts the outcome to the loop.
func (a *Agent) exchange(ctx context.Context, l *lease4.Lease, how string, until time.Time) {
	s := &a.st.lease
	s.busy[l.Interface] = l
	o := dhcp.Options{}
	if it, ok := a.st.intended.Get(items.DHCP4LeaseRef(l.Interface)); ok {
		o = dhcp.OptionsOf(it.(*items.DHCP4Lease))
	}
	a.log.WithFields(leaseFields(l)).WithField("state", how).Info("dhcp4: extending the lease")
	c := a.cfg.LeaseClient
	go func() {
		ctx, cancel := context.WithDeadline(ctx, until)
		defer cancel()
		r := leaseResult{old: l, how: how}
		if how == dhcp.ObtainedRenew {
			r.got, r.err = c.Renew(ctx, l, o)
		} else {
			r.got, r.err = c.Rebind(ctx, l, o)
		}
		select {
		case a.leaseDone <- r:
		case <-ctx.Done():
			select {
			case a.leaseDone <- r:
			case <-a.done:
			}
		}
	}()
}

// extended takes in the outcome of an exchange: the lease extended
// (saved, held), refused (let go: acquired afresh), or no answer or an
// unusable one (ErrUnusable: the lease held stays; tried
// again at half the time left, at least 5 s apart, as RFC 2131 4.4.5
// says, until T2 or the expiry).
func (a *Agent) extended(r leaseResult) {
	s := &a.st.lease
	name := r.old.Interface
	if !stillInUse(name, r.old, s.used, s.busy) {
		a.scheduleLeases()
		return
	}
	now := time.Now()
	delete(s.lastError, name)
	switch {
	case r.err == nil:
		event := extendedEvent(r.how == dhcp.ObtainedRebind)
		a.mx.m.ObserveLease(name, event)
		a.log.WithFields(leaseFields(r.got)).Info("dhcp4: lease " + event)
		dhcp.WarnDropped(a.log, r.got)
		if a.cfg.StateDir != "" {
			if err := dhcp.SaveLease(a.cfg.StateDir, r.got); err != nil {
				a.log.WithError(err).Warn("dhcp4: keeping the lease")
			}
		}
		a.cfg.Leases.Set(r.got)
		a.syncLeases()
		return
	case errors.Is(r.err, dhcp.ErrNAK):
		a.mx.m.ObserveLease(name, "refused")
		a.log.WithError(r.err).WithField("interface", name).Warn("dhcp4: lease refused; withdrawing it and starting over")
		a.restartLease(name)
		return
	}
	s.lastError[name] = r.err.Error()
	next := retryAt(r.old, r.how == dhcp.ObtainedRenew, now)
	s.due[name] = next
	msg := "dhcp4: no answer; trying again"
	if errors.Is(r.err, dhcp.ErrUnusable) {
		a.mx.m.ObserveLease(name, "invalid")
		msg = "dhcp4: the server's answer is unusable; keeping the lease held, trying again"
	}
	a.log.WithError(r.err).WithFields(logrus.Fields{"interface": name, "next": next.Format(time.RFC3339)}).Warn(msg)
	a.scheduleLeases()
}

// stillInUse takes the exchange on old (name's lease) off busy and
// reports whether old is still the lease in use on name: not let go or
// replaced while the exchange ran.
func stillInUse[L comparable](name string, old L, used, busy map[string]L) bool {
	if busy[name] == old {
		delete(busy, name)
	}
	return used[name] == old
}

// extendedEvent names an extension in logs and metrics.
func extendedEvent(rebind bool) string {
	if rebind {
		return "rebound"
	}
	return "renewed"
}

// retryAt is when to try again after an exchange on l went unanswered at
// now (renewing: a renewal, else a rebinding): at half the time left
// until the end of its state (T2 for a renewal, the expiry for a
// rebinding), at least 5 s apart, never after that end; a renewal that ran
// into T2 goes on as a rebinding at once.
func retryAt(l leaseTimes, renewing bool, now time.Time) time.Time {
	end := l.RebindAt()
	if !now.Before(end) {
		if renewing {
			return now
		}
		end = l.Expires()
	}
	next := now.Add(max(end.Sub(now)/2, 5*time.Second))
	if next.After(end) {
		next = end
	}
	return next
}

// expire lets an expired lease go: its address and routes are withdrawn,
// and the lease item is acquired afresh.
func (a *Agent) expire(l *lease4.Lease) {
	a.mx.m.ObserveLease(l.Interface, "expired")
	a.log.WithFields(leaseFields(l)).Warn("dhcp4: lease expired; withdrawing its address and routes, starting over")
	a.restartLease(l.Interface)
}

// restartLease drops the lease held on name: the intent renders without
// it, and the next reconcile withdraws its address and routes; then
// (restartLeases) its item leaves the current state, and the reconcile
// after that acquires it again (a DISCOVER). Two steps, since nothing
// depending on an item changes while an operation on it is in flight.
func (a *Agent) restartLease(name string) {
	a.cfg.Leases.Drop(name)
	if a.cfg.StateDir != "" {
		dhcp.ForgetLease(a.cfg.StateDir, name)
	}
	a.st.lease.restart[name] = true
	a.syncLeases()
	a.st.want(reasonLease)
}

// restartLeases takes the items of the leases let go (of both families)
// out of the current state, after the reconcile that withdrew what came
// from them.
func (a *Agent) restartLeases() {
	for _, f := range []struct {
		restart map[string]bool
		ref     func(string) dg.ItemRef
	}{{a.st.lease.restart, items.DHCP4LeaseRef}, {a.st.lease6.restart, items.DHCP6LeaseRef}} {
		for name := range f.restart {
			a.st.current.Delete(f.ref(name))
			delete(f.restart, name)
			a.st.want(reasonLease)
		}
	}
}

// countUnusableLeases counts, as the lease event invalid, each
// acquisition of a reconcile's operations that a server answered with a
// lease no host can take (dhcp.ErrUnusable, dhcp6.ErrUnusable): the lease
// item failed, and status names the address.
func (a *Agent) countUnusableLeases(ops []reconciler.OpLogEntry) {
	for _, e := range ops {
		switch {
		case e.Ref.Type == items.TypeDHCP4Lease && errors.Is(e.Err, dhcp.ErrUnusable):
			a.mx.m.ObserveLease(e.Ref.Name, "invalid")
		case e.Ref.Type == items.TypeDHCP6Lease && errors.Is(e.Err, dhcp6.ErrUnusable):
			a.mx.m.ObserveLease6(e.Ref.Name, "invalid")
		}
	}
}

// rerender renders the accepted documents again (the leases changed) and
// adopts the graph: no new version, the intent is the same.
func (a *Agent) rerender(reason string) {
	next := a.st.docs.clone()
	next.stale = true
	a.adopt(next, reason)
}

// leaseStatuses lists the leases in use, by interface.
func (a *Agent) leaseStatuses() []status.LeaseStatus {
	s := &a.st.lease
	var out []status.LeaseStatus
	for _, name := range slices.Sorted(maps.Keys(s.used)) {
		l := s.used[name]
		ls := status.LeaseStatus{Interface: name, Family: "ipv4", Address: l.Address.String(), Domains: l.Domains, Obtained: l.Obtained,
			Acquired: l.Acquired, RenewAt: l.RenewAt(), RebindAt: l.RebindAt(), Expires: l.Expires(),
			Held: a.cfg.Leases != nil && a.cfg.Leases.Get(name) == l, Dropped: l.Dropped, LastError: s.lastError[name],
			Refused: a.refusals[items.DHCP4LeaseRef(name)]}
		if l.Server.IsValid() {
			ls.Server = l.Server.String()
		}
		if l.Router.IsValid() {
			ls.Gateway = l.Router.String()
		}
		for _, d := range l.DNS {
			ls.DNS = append(ls.DNS, d.String())
		}
		out = append(out, ls)
	}
	if a.cfg.Leases6 != nil {
		out = append(out, a.lease6Statuses()...)
	}
	return out
}

func leaseFields(l *lease4.Lease) logrus.Fields {
	return logrus.Fields{"interface": l.Interface, "address": l.Address.String(), "server": l.Server.String(),
		"gateway": l.Router.String(), "dns": l.DNS, "obtained": l.Obtained,
		"renew": l.RenewAt().Format(time.RFC3339), "expires": l.Expires().Format(time.RFC3339)}
}

// noteRefusals takes from g, the graph being adopted, what it leaves out
// of each lease in use (render.LeaseRefused: the server offered what
// would take over the intent's own networks), for status, and logs each
// new reason once. It reads g's own lease items: the intended graph keeps
// an item that is Equal, and Refused is no part of that.
func (a *Agent) noteRefusals(g *dg.Graph) {
	seen := map[dg.ItemRef]string{}
	note := func(ref dg.ItemRef) {
		why := render.LeaseRefused(g, ref)
		if why == "" {
			return
		}
		if a.refusals[ref] != why {
			a.log.WithField("item", ref.String()).Warn("lease refused in part or whole: " + why)
		}
		seen[ref] = why
	}
	for name := range a.st.lease.used {
		note(items.DHCP4LeaseRef(name))
	}
	for name := range a.st.lease6.used {
		note(items.DHCP6LeaseRef(name))
	}
	a.refusals = seen
}
