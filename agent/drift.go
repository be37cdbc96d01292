package agent

import (
	"context"
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
func (a *Agent) checkDrift(ctx context.Context) {
	s := a.st
	defer s.drift.set(a.cfg.DriftInterval)
	if s.results.async {
		a.log.Debug("drift check postponed: operations in progress")
		return
	}
	rb, err := a.cfg.Kernel.ReadCurrent(ctx, s.intended)
	if err != nil {
		a.log.WithError(err).Warn("drift check: reading the kernel back failed")
		return
	}
	drifts := diffReadBack(s.current, rb)
	for _, d := range drifts {
		a.log.WithFields(logrus.Fields{"item": d.ref.String(), "drift": d.what()}).Warn("drift: repairing")
		d.apply(s.current, time.Now())
	}
	if len(drifts) > 0 {
		s.want(reasonDrift)
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
