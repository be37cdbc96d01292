package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"

	dg "github.com/netagent/netagent/depgraph"
)

// checkDrift reads the kernel back and puts into the current state what
// someone else changed: an owned object deleted behind the agent's back is
// taken out (so the reconciler creates it again), one changed is put with
// its kernel value (so it is modified back), an owned object the agent did
// not know of is put in (so it is deleted unless intended), and external
// links are brought up to date. Items that failed or are in transition are
// left alone: they are retried, or settle, anyway.
//
// A difference in an item the agent wrote since the last check is a change
// the kernel did not keep (see unkept): it is held, not repaired at once.
func (a *Agent) checkDrift(ctx context.Context) {
	s := a.st
	defer s.drift.set(a.cfg.DriftInterval)
	if s.results.records.AnyInFlight() {
		a.log.Debug("drift check postponed: operations in progress")
		return
	}
	rb, err := a.cfg.Kernel.ReadCurrent(ctx, s.intended)
	if err != nil {
		a.log.WithError(err).Warn("drift check: reading the kernel back failed")
		return
	}
	now := time.Now()
	written := s.results.takeWritten()
	drifts := diffReadBack(s.current, rb)
	repaired := false
	for _, d := range drifts {
		u := s.results.unkept[d.ref]
		if written[d.ref] {
			u = a.notKept(d, now)
		}
		if u != nil && u.held() {
			u.found = &d // held until due
			continue
		}
		a.log.WithFields(logrus.Fields{"item": d.ref.String(), "drift": d.what()}).Warn("drift: repairing")
		d.apply(s.current, now)
		repaired = true
	}
	a.forgetKept(drifts)
	if repaired {
		s.want(reasonDrift)
	}
	a.scheduleUnkept()
}

// unkept is an item whose change the kernel did not keep: the read-back
// that followed the agent's write found it otherwise (the kernel clamped a
// sysctl, another program took a chain's position back, an object came
// back or went away). The first time, it is repaired at once like any
// drift: the kernel may have undone it once as a side effect (a bridge
// flushes its neighbours when a port joins). From the second time in a
// row, repairing it at once would rewrite it after every read-back, that
// is every second, for ever; instead the difference is held (the current
// state keeps what the agent wrote, so no reconcile touches it) and
// released for a reconcile after the backoff of a failed item (the first
// step, then doubling). Held, the item shows as not converging, with the
// reason, until a read-back finds the change kept; the count then starts
// over.
type unkept struct {
	count  int    // consecutive read-backs that found the change undone
	reason string // "the kernel did not keep the change: ..."
	since  time.Time
	due    time.Time // when found is released
	want   dg.Item   // the intended value the agent wrote (nil: none, it deleted)
	found  *drift    // the kernel's version, held; nil once released
}

// held reports whether the item falls under the backoff: the kernel undid
// the agent's change more than once in a row.
func (u *unkept) held() bool { return u.count > 1 }

// notKept records that the kernel undid the agent's last write of d.ref;
// from the second time in a row, the difference is held until the backoff
// has passed.
func (a *Agent) notKept(d drift, now time.Time) *unkept {
	r := &a.st.results
	u := r.unkept[d.ref]
	if u == nil {
		u = &unkept{since: now}
		r.unkept[d.ref] = u
	}
	u.count++
	u.want, _ = a.st.intended.Get(d.ref)
	u.reason = "the kernel did not keep the change: " + d.describe()
	if !u.held() {
		return u
	}
	u.found = &d
	delay := r.backoff.delay(u.count - 1)
	u.due = now.Add(delay)
	a.log.WithFields(logrus.Fields{"item": d.ref.String(), "attempt": u.count - 1, "in": delay.Round(time.Millisecond),
		"problem": u.reason}).Warn("the kernel did not keep a change again; writing it after a backoff")
	return u
}

// forgetKept drops the unkept items that the read-back found as the agent
// wrote them: the kernel keeps the change now (a held difference that the
// kernel itself put right is dropped too).
func (a *Agent) forgetKept(drifts []drift) {
	r := &a.st.results
	if len(r.unkept) == 0 {
		return
	}
	undone := map[dg.ItemRef]bool{}
	for _, d := range drifts {
		undone[d.ref] = true
	}
	for ref, u := range r.unkept {
		if !undone[ref] {
			a.log.WithFields(logrus.Fields{"item": ref.String(), "attempts": u.count}).Info("the kernel keeps the change now")
			delete(r.unkept, ref)
		}
	}
}

// releaseUnkept puts into the current state the kernel's version of every
// unkept item whose backoff has passed, so that the next reconcile writes
// it again.
func (a *Agent) releaseUnkept(now time.Time) {
	for _, u := range a.st.results.unkept {
		if u.found != nil && !u.due.After(now) {
			u.found.apply(a.st.current, now)
			u.found = nil
		}
	}
}

// pruneUnkept forgets the unkept items whose intended value changed (or
// went): what the agent will write now is another change. A held
// difference is released first, so that the reconcile sees the kernel as
// it is.
func (a *Agent) pruneUnkept(now time.Time) {
	r := &a.st.results
	for ref, u := range r.unkept {
		want, ok := a.st.intended.Get(ref)
		if ok == (u.want != nil) && (!ok || want.Equal(u.want)) {
			continue
		}
		if u.found != nil {
			u.found.apply(a.st.current, now)
		}
		delete(r.unkept, ref)
	}
}

// drift is one difference between the current state and the kernel.
type drift struct {
	ref      dg.ItemRef
	old, new dg.Item // nil: absent
}

func (d drift) what() string {
	switch {
	case d.new == nil:
		return "gone"
	case d.old == nil:
		return "found"
	}
	return "changed"
}

// describe says what the kernel holds instead of what was written.
func (d drift) describe() string {
	switch {
	case d.new == nil:
		return fmt.Sprintf("%s was written, then gone from the kernel", d.ref)
	case d.old == nil:
		return fmt.Sprintf("%s was deleted, then found in the kernel again: %s", d.ref, d.new)
	}
	return fmt.Sprintf("%s was written as %s, the kernel holds %s", d.ref, d.old, d.new)
}

func (d drift) apply(g *dg.Graph, now time.Time) {
	if d.new == nil {
		g.Delete(d.ref)
		return
	}
	g.PutWithState(d.new, dg.StateData{State: dg.StateCreated, Since: now})
}

// diffReadBack compares the settled items of current with a fresh
// read-back, in ref order.
func diffReadBack(current, rb *dg.Graph) []drift {
	var out []drift
	for _, ref := range current.Refs() {
		old, st, _ := current.Lookup(ref)
		if st.State != dg.StateCreated {
			continue
		}
		nw, ok := rb.Get(ref)
		switch {
		case !ok:
			out = append(out, drift{ref: ref, old: old})
		case !nw.Equal(old):
			out = append(out, drift{ref: ref, old: old, new: nw})
		}
	}
	for _, ref := range rb.Refs() {
		if !current.Contains(ref) {
			nw, _ := rb.Get(ref)
			out = append(out, drift{ref: ref, new: nw})
		}
	}
	return out
}
