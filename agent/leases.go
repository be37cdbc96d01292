package agent

import (
	"time"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/lease"
	"github.com/netagent/netagent/agent/render"
)

// reasonLease: a DHCP lease was acquired, changed, expired or let go.
const reasonLease = "lease"

// seedLeases makes the loop's lease schedulers (agent/lease: one per
// family configured, which own the leases in use and their timers), with
// the leases the state directory keeps, still valid: the first render
// keeps their addresses and routes intended, so that a restart withdraws
// nothing.
func (a *Agent) seedLeases() {
	c := a.cfg
	f := lease.Families{Leases4: c.Leases, Client4: c.LeaseClient, Observe4: a.mx.m.ObserveLease,
		Leases6: c.Leases6, Client6: c.LeaseClient6, Observe6: a.mx.m.ObserveLease6}
	cfg := lease.Config{StateDir: c.StateDir, Log: a.log, Reports: a.leasesDone, Stop: a.done}
	a.st.leases = lease.NewSchedulers(f, cfg, time.Now())
}

// syncLeases takes in what the lease items' configurators did (a lease
// acquired, confirmed or let go), after a reconcile: the DHCPv4 leases,
// then the items of the leases let go (of both families) leave the
// current state, after the reconcile that withdrew what came from them,
// then the DHCPv6 leases.
func (a *Agent) syncLeases() {
	s := a.st
	a.leasesChanged(s.leases.V4.Sync(s.leaseGraphs()))
	for _, ref := range s.leases.TakeRestarts() {
		s.current.Delete(ref)
		s.want(reasonLease)
	}
	a.leasesChanged(s.leases.V6.Sync(s.leaseGraphs()))
}

// leasesChanged does what the schedulers ask (render again, reconcile)
// and sets the lease alarm to the soonest lease due.
func (a *Agent) leasesChanged(c lease.Changes) {
	s := a.st
	if c.Rerender {
		a.rerender(reasonLease)
	}
	if c.Reconcile {
		s.want(reasonLease)
	}
	s.leaseAlarm.stop()
	if next := s.leases.Next(); !next.IsZero() {
		s.leaseAlarm.set(max(time.Until(next), 0))
	}
}

// leaseFacts returns the facts render needs for files: the host's
// (Config.Facts) and the leases in use, of both families.
func (a *Agent) leaseFacts(files map[string]*intent.Intent) render.Facts {
	var f render.Facts
	if a.cfg.Facts != nil {
		f = a.cfg.Facts(files)
	}
	if a.st != nil {
		a.st.leases.Facts(&f)
	}
	return f
}

// rerender renders the accepted documents again (the leases changed) and
// adopts the graph: no new version, the intent is the same.
func (a *Agent) rerender(reason string) {
	next := a.st.docs.clone()
	next.stale = true
	a.adopt(next, reason)
}

// leaseGraphs are the graphs the lease schedulers read.
func (s *loopState) leaseGraphs() lease.Graphs {
	return lease.Graphs{Intended: s.intended, Current: s.current}
}
