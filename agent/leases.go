package agent

import (
	"time"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/lease"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/items"
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
	settled := !s.leases.V4.Adopting() // before this sync: the reconcile just run rendered the leases' answers
	a.leasesChanged(s.leases.V4.Sync(s.leaseGraphs()))
	for _, ref := range s.leases.TakeRestarts() {
		s.current.Delete(ref)
		s.want(reasonLease)
	}
	a.leasesChanged(s.leases.V6.Sync(s.leaseGraphs()))
	if s.adoptingLeases && settled {
		a.endAdoption()
	}
}

// adoptFoundLeases, with `run --adopt` (Config.Adopt and
// Config.FindLeases), takes in the DHCPv4 leases other clients hold on the
// intended interfaces with dhcp4 that have no lease in use (lease.Scheduler
// Adopt), and renders with them: their addresses and routes stay
// intended, the first reconcile adopts them while the lease items ask the
// servers for the same addresses, and the adoption lasts until every found
// lease is settled and what its server said is applied (syncLeases).
func (a *Agent) adoptFoundLeases() {
	c, s := a.cfg, a.st
	if c.Adopt == nil || c.FindLeases == nil || s.leases.V4 == nil {
		return
	}
	used := s.leases.V4.Used()
	var ifs []string
	for it := range s.intended.Items() {
		if l, ok := it.(*items.DHCP4Lease); ok && used[l.Dev] == nil {
			ifs = append(ifs, l.Dev)
		}
	}
	if len(ifs) > 0 && s.leases.V4.Adopt(c.FindLeases(ifs)) {
		a.rerender(reasonLease)
	}
}

// endAdoption ends `run --adopt`'s adoption (Config.Adopt(false)); a
// failure is logged: the configurators then go on adopting.
func (a *Agent) endAdoption() {
	a.st.adoptingLeases = false
	if err := a.cfg.Adopt(false); err != nil {
		a.log.WithError(err).Error("ending the adoption of the DHCP leases found")
		return
	}
	a.log.Info("dhcp4: the leases of other clients are settled; the adoption is over")
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
