package lease

import (
	"context"
	"time"

	"github.com/sirupsen/logrus"

	dg "github.com/netagent/netagent/depgraph"
)

// Report is the outcome of an exchange, posted to Config.Reports from the
// exchange's goroutine; the loop hands it back to the scheduler that
// started the exchange (Take).
type Report interface {
	// Take takes the outcome in, on the loop goroutine: the lease
	// extended (saved, held), refused (let go: acquired afresh), or no
	// answer or an unusable one (the lease held stays; tried again at
	// RetryAt, until T2 or the expiry).
	Take(g Graphs) Changes
}

// result is the outcome of a renewal or rebinding of old on name.
type result[L Lease[L]] struct {
	s        *Scheduler[L]
	name     string
	old, got L
	rebind   bool
	err      error
}

func (r *result[L]) Take(g Graphs) Changes { return r.s.done(r, g) }

// Due handles the caller's timer (Next): each lease due renews (before
// T2), rebinds (before its expiry) or expires (ActionAt), the last also
// with an exchange in flight (whose outcome is then ignored).
func (s *Scheduler[L]) Due(ctx context.Context, g Graphs) Changes {
	var c Changes
	if s == nil {
		return c
	}
	now := time.Now()
	for name, at := range s.due {
		l, ok := s.used[name]
		if !ok {
			continue
		}
		act := ActionAt(l, at, s.busy[name] == l, now)
		if act == Expire {
			c = c.Or(s.expire(name, l, g))
		}
		if act != Renew && act != Rebind {
			continue
		}
		x := s.fam.Exchanger(g.Intended, name)
		if x == nil {
			s.due[name] = l.Expires() // nothing extends it: it ends
			continue
		}
		s.extend(ctx, x, name, l, act == Rebind)
	}
	return c
}

// extend renews or rebinds l in a goroutine (Extend), which posts the
// outcome to Reports.
func (s *Scheduler[L]) extend(ctx context.Context, x Exchange[L], name string, l L, rebind bool) {
	s.busy[name] = l
	s.cfg.Log.WithFields(s.fam.Fields(l)).WithField("state", state(rebind)).Info(s.info.Name + ": extending the lease")
	reports, stop := s.cfg.Reports, s.cfg.Stop
	r := &result[L]{s: s, name: name, old: l, rebind: rebind}
	go func() {
		r.got, r.err = Extend(ctx, x, l, rebind)
		select {
		case reports <- r:
		case <-stop:
		}
	}()
}

// Extend renews (before T2) or, rebind, rebinds (before the expiry) l
// with x, bounded by the end of that state (T2, or the expiry): the
// exchange the scheduler runs off the loop, and that a caller without a
// loop (a one-shot command) may run itself. What x's client paces (the
// clients' leasebook.Pacer) stays paced.
func Extend[L Lease[L]](ctx context.Context, x Exchange[L], l L, rebind bool) (L, error) {
	until := l.RebindAt()
	if rebind {
		until = l.Expires()
	}
	ctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	return x(ctx, l, rebind)
}

// done takes in the outcome of an exchange (Report.Take).
func (s *Scheduler[L]) done(r *result[L], g Graphs) Changes {
	name := r.name
	if !stillInUse(name, r.old, s.used, s.busy) {
		return Changes{}
	}
	delete(s.lastError, name)
	switch {
	case r.err == nil:
		return s.extended(r, g)
	case s.fam.Refused(r.err):
		s.cfg.Observe(name, "refused")
		s.cfg.Log.WithError(r.err).WithField("interface", name).Warn(s.info.Name + ": " + s.info.Refused + "; withdrawing it and starting over")
		return s.restartLease(name, g)
	}
	s.lastError[name] = r.err.Error()
	next := RetryAt(r.old, !r.rebind, time.Now())
	s.due[name] = next
	msg := s.info.Name + ": no answer; trying again"
	if s.fam.Unusable(r.err) {
		s.cfg.Observe(name, "invalid")
		msg = s.info.Name + ": the server's answer is unusable; keeping the lease held, trying again"
	}
	s.cfg.Log.WithError(r.err).WithFields(logrus.Fields{"interface": name, "next": next.Format(time.RFC3339)}).Warn(msg)
	return Changes{}
}

// extended keeps and holds the lease an exchange got.
func (s *Scheduler[L]) extended(r *result[L], g Graphs) Changes {
	event := extendedEvent(r.rebind)
	s.cfg.Observe(r.name, event)
	s.cfg.Log.WithFields(s.fam.Fields(r.got)).Info(s.info.Name + ": lease " + event)
	s.fam.WarnDropped(s.cfg.Log, r.got)
	if s.cfg.StateDir != "" {
		if err := s.fam.Save(s.cfg.StateDir, r.got); err != nil {
			s.cfg.Log.WithError(err).Warn(s.info.Name + ": keeping the lease")
		}
	}
	s.book.Set(r.got)
	return s.Sync(g)
}

// expire lets an expired lease go: its address (and routes) are
// withdrawn, and the lease item is acquired afresh.
func (s *Scheduler[L]) expire(name string, l L, g Graphs) Changes {
	s.cfg.Observe(name, "expired")
	s.cfg.Log.WithFields(s.fam.Fields(l)).Warn(s.info.Name + ": lease expired; withdrawing " + s.info.Withdrawing + ", starting over")
	return s.restartLease(name, g)
}

// restartLease drops the lease held on name: the intent renders without
// it, and the next reconcile withdraws what came from it; then
// (TakeRestarts) its item leaves the current state, and the reconcile
// after that acquires it again. Two steps, since nothing depending on an
// item changes while an operation on it is in flight.
func (s *Scheduler[L]) restartLease(name string, g Graphs) Changes {
	s.book.Drop(name)
	if s.cfg.StateDir != "" {
		s.fam.Forget(s.cfg.StateDir, name)
	}
	s.restart[name] = true
	c := s.Sync(g)
	c.Reconcile = true
	return c
}

// TakeRestarts returns the lease items of the leases let go, to be taken
// out of the current state after the reconcile that withdrew what came
// from them, and forgets them.
func (s *Scheduler[L]) TakeRestarts() []dg.ItemRef {
	if s == nil {
		return nil
	}
	var refs []dg.ItemRef
	for name := range s.restart {
		refs = append(refs, s.info.Ref(name))
		delete(s.restart, name)
	}
	return refs
}
