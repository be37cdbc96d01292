package agent

import (
	"context"
	"slices"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/metrics"
	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// checkDrift reads the kernel back and puts into the current state what
// someone else changed: an owned object deleted behind the agent's back is
// taken out (so the reconciler creates it again), one changed is put with
// its kernel value (so it is modified back), an owned object the agent did
// not know of is put in (so it is deleted unless intended), and external
// links are brought up to date. Items that failed or are in transition are
// left alone: they are retried, or settle, anyway. Foreign routes and rules
// (another protocol's: the default route of router advertisements, proto
// ra, comes and goes with them) are brought up to date silently: netagent
// never touches them, so their changes are no drift, logged, counted or
// reconciled.
//
// A difference in an item the agent wrote since the last check is a change
// the kernel did not keep, handled by the rule the one-shot apply follows
// too (host.Verifier): repaired at once the first time in a row, held
// from the second, and reported as not converging. The daemon adds only
// its timing: a held difference is released for a reconcile after the
// backoff of a failed item (the first step, then doubling); held, the
// current state keeps what the agent wrote, so no reconcile touches it.
// inFlightBesidesLeases reports whether an operation other than a DHCPv4
// lease's acquisition continues in the background. A lease may take as
// long as its server stays away: the drift checks go on meanwhile, leaving
// the lease item to its own operation.
func (a *Agent) inFlightBesidesLeases() bool {
	for _, ref := range a.st.results.records.InFlightRefs() {
		if ref.Type != items.TypeDHCP4Lease {
			return true
		}
	}
	return false
}

func (a *Agent) checkDrift(ctx context.Context) {
	s := a.st
	if a.cfg.DriftInterval > 0 { // also called by a reload, when drift checks may be off
		defer s.drift.set(a.cfg.DriftInterval)
	}
	if a.inFlightBesidesLeases() {
		a.log.Debug("drift check postponed: operations in progress")
		return
	}
	found, kept, err := a.readAndVerify(ctx)
	if err != nil {
		a.log.WithError(err).Warn("drift check: reading the kernel back failed")
		return
	}
	r := &s.results
	reported := map[dg.ItemRef]host.Drift{}
	repaired := a.takeFindings(found, reported)
	for ref, count := range kept {
		a.log.WithFields(logrus.Fields{"item": ref.String(), "attempts": count}).Info("the kernel keeps the change now")
		delete(r.held, ref)
	}
	s.policy.reported = reported
	a.mx.stale = a.mx.stale || len(kept) > 0
	if repaired {
		s.want(reasonDrift)
	} else if s.unsettled {
		a.workSettled()
	}
	a.scheduleUnkept()
}

// takeFindings puts what a read-back found into the current state, as
// the items' drift policies say: repaired (the kernel's version, for the
// reconciler to write back over), left and reported (into reported), or
// held (a change the kernel did not keep again); it counts them in the
// metrics and reports whether anything is to be repaired.
func (a *Agent) takeFindings(found []host.Finding, reported map[dg.ItemRef]host.Drift) (repaired bool) {
	s := a.st
	now := time.Now()
	counted := make([]metrics.Finding, 0, len(found))
	for _, f := range found {
		if f.Ref.Type == items.TypeForeign {
			f.Apply(s.current, now) // observed only: no drift, nothing to repair
			continue
		}
		if s.results.records.InFlight(f.Ref) { // a lease being acquired: its own operation settles it
			continue
		}
		if leave, report := a.leaveDrift(f, reported); leave {
			if report && a.newlyReported(f.Drift) {
				a.log.WithFields(logrus.Fields{"item": f.Ref.String(), "drift": f.What()}).Warn("drift: reporting, not repairing (drift policy report)")
				counted = append(counted, metrics.Finding{Ref: f.Ref})
			}
			continue
		}
		counted = append(counted, metrics.Finding{Ref: f.Ref, Repair: !f.Held()}) // held: not repaired
		if f.Held() {
			a.hold(f, now)
			continue
		}
		a.log.WithFields(logrus.Fields{"item": f.Ref.String(), "drift": f.What()}).Warn("drift: repairing")
		f.Apply(s.current, now)
		repaired = true
	}
	a.metricsAfterDrift(counted, 0)
	return repaired
}

// linkTypes are the item types the link configurator reads back
// (Kernel.ReadLinkItems), external links aside.
var linkTypes = map[string]bool{items.TypeInterface: true, items.TypePort: true, items.TypeBridgeVLANs: true}

// checkLinks reads the links back alone (one link dump:
// Kernel.ReadLinkItems) after a burst of link events that named a link
// the agent owns, and repairs at once what someone changed on it (its
// MTU, its state, its master, a port's settings), as the drift check
// would, without waiting for it. Only changes of items the current state
// holds as created count (linkDrifts): the items the agent wrote since
// the last drift check, those in transition or blocked, those whose
// change the kernel did not keep, links gone or new, and the links of skip (whose external
// link appeared, went or was replaced in this burst: the link events'
// own path handles them) are left to that check (the Verifier tells a
// change the kernel undid from someone else's). A link of named (the
// owned links the burst's events named) that the current state holds as
// created and the kernel has not got any more (deleted by hand, with
// nothing of netagent's on it whose notification would say so) runs that
// check within a second, as an owned route's deletion does
// (ownedrepair.go): it puts the link back under its drift policy.
func (a *Agent) checkLinks(ctx context.Context, skip map[string]bool, named []string) {
	s := a.st
	list, err := a.cfg.Kernel.ReadLinkItems(ctx, s.intended)
	if err != nil {
		a.log.WithError(err).Warn("reading the links back after a link event; the drift check will")
		return
	}
	if s.ownedLinkGone(named, list) {
		s.ownedPending = true
		s.ownedDeb.Touch()
	}
	var found []host.Finding
	for _, d := range linkDrifts(s.current, list) {
		if skip[d.Ref.Name] || s.results.written[d.Ref] || s.results.verifier.Unkept(d.Ref) != nil || s.results.held[d.Ref] != nil {
			continue
		}
		found = append(found, host.Finding{Drift: d})
	}
	a.repairFound(found)
}

// ownedLinkGone reports whether a link of named that the current state
// holds as created is not in list, the links read back.
func (s *loopState) ownedLinkGone(named []string, list []dg.Item) bool {
	var have map[dg.ItemRef]bool // made on first need
	for _, n := range named {
		ref := items.InterfaceRef(n)
		if _, st, ok := s.current.Lookup(ref); !ok || st.State != dg.StateCreated {
			continue
		}
		if have == nil {
			have = make(map[dg.ItemRef]bool, len(list))
			for _, it := range list {
				have[dg.Ref(it)] = true
			}
		}
		if !have[ref] {
			return true
		}
	}
	return false
}

// linkDrifts compares the owned link items of current (settled ones: of
// linkTypes, created) with list, the links read back: each that the
// kernel holds with other values, in ref order. (A link gone or new is
// the drift check's: its dependents need the full read-back.)
func linkDrifts(current *dg.Graph, list []dg.Item) []host.Drift {
	var out []host.Drift
	for _, now := range list {
		ref := dg.Ref(now)
		if !linkTypes[ref.Type] || now.External() {
			continue
		}
		it, st, ok := current.Lookup(ref)
		if ok && !it.External() && st.State == dg.StateCreated && !now.Equal(it) {
			out = append(out, host.Drift{Ref: ref, Old: it, New: now})
		}
	}
	slices.SortFunc(out, func(a, b host.Drift) int { return a.Ref.Compare(b.Ref) })
	return out
}

// readAndVerify reads the kernel back and applies the Verifier's rule to
// what it finds against the current graph.
func (a *Agent) readAndVerify(ctx context.Context) ([]host.Finding, map[dg.ItemRef]int, error) {
	s := a.st
	list, err := a.cfg.Kernel.ReadItems(ctx, s.intended)
	if err != nil {
		return nil, nil, err
	}
	r := &s.results
	found, kept := r.verifier.VerifyItems(s.current, list, s.intended, r.takeWritten(), time.Now())
	return found, kept, nil
}

// held is the daemon's timing of a change the kernel did not keep, held
// from the second time in a row: the kernel's version, released for a
// reconcile when due.
type held struct {
	due   time.Time
	found *host.Drift // the kernel's version, held; nil once released
}

// hold holds a difference the Verifier holds: with a new backoff if this
// read-back counted it again, else until the backoff set before is due.
func (a *Agent) hold(f host.Finding, now time.Time) {
	r := &a.st.results
	h := r.held[f.Ref]
	if h == nil {
		h = &held{}
		r.held[f.Ref] = h
	}
	d := f.Drift
	h.found = &d
	if !f.Again {
		return
	}
	delay := r.backoff.Delay(f.Unkept.Count - 1)
	h.due = now.Add(delay)
	a.log.WithFields(logrus.Fields{"item": f.Ref.String(), "attempt": f.Unkept.Count - 1, "in": delay.Round(time.Millisecond),
		"problem": f.Unkept.Reason}).Warn("the kernel did not keep a change again; writing it after a backoff")
}

// releaseUnkept puts into the current state the kernel's version of every
// held item whose backoff has passed, so that the next reconcile writes
// it again.
func (a *Agent) releaseUnkept(now time.Time) {
	for _, h := range a.st.results.held {
		if h.found != nil && !h.due.After(now) {
			h.found.Apply(a.st.current, now)
			h.found = nil
		}
	}
}

// pruneUnkept forgets the unkept items whose intended value changed (or
// went): what the agent will write now is another change. A held
// difference is released first, so that the reconcile sees the kernel as
// it is.
func (a *Agent) pruneUnkept(now time.Time) {
	r := &a.st.results
	for _, ref := range r.verifier.Prune(a.st.intended) {
		if h := r.held[ref]; h != nil && h.found != nil {
			h.found.Apply(a.st.current, now)
		}
		delete(r.held, ref)
	}
}

// The drift policy of the intent ("drift": repair, report, ignore;
// intent.DriftPolicy) is the daemon's: a difference its drift check finds
// in an item that someone else changed or deleted is repaired only if the
// item's policy says repair. A report item's difference is listed in
// status (Status.Drifted: the attribute, the intended and the running
// value) and counted in the metrics as found and not repaired; an ignore
// item's is neither. Either way the current state keeps what netagent
// wrote, so no reconcile touches the item: the reconciler stays unaware of
// policies. What is not drift is not filtered: an item the intent adds is
// created, one whose intended value changes is written, and a change of
// netagent's own that the kernel did not keep follows the Verifier's rule.
// A start of the daemon reads the kernel back and converges everything,
// like `netagent apply`: both are the operator's order to apply the
// intent (and after a reboot a NIC holds its driver's defaults, which
// nothing but configuring it tells apart from a change by hand).

// driftPolicies is the loop's record of the policies.
type driftPolicies struct {
	adopted  render.DriftPolicies // of the intended graph
	rendered render.DriftPolicies // of the graph rendered last (adopted with it)
	// reported are the report items the last drift check found drifted.
	reported map[dg.ItemRef]host.Drift
}

// driftRenderer wraps r so that each successful render records the drift
// policies of its files, for adoptDrift.
func (a *Agent) driftRenderer(r Renderer) Renderer {
	return func(files map[string]*intent.Intent) (*dg.Graph, error) {
		g, err := r(files)
		if err != nil || a.st == nil {
			return g, err
		}
		p, perr := render.DriftOf(files)
		if perr != nil {
			a.log.WithError(perr).Warn("drift policies: every item is repaired")
		}
		a.st.policy.rendered = p
		return g, nil
	}
}

// adoptDrift takes the policies of the graph rendered last, adopted now,
// and forgets the reported items whose policy or intended value changed.
func (a *Agent) adoptDrift(g *dg.Graph) {
	d := &a.st.policy
	d.adopted, d.rendered = d.rendered, nil
	for ref, f := range d.reported {
		want, ok := g.Get(ref)
		if !ok || d.adopted.Of(ref) != intent.DriftReport || f.Old == nil || !want.Equal(f.Old) {
			delete(d.reported, ref)
		}
	}
}

// leaveDrift reports whether a drift check's finding f is left alone by
// the policy of its item, recording it in reported if its policy is
// report. A change of netagent's own the kernel did not keep (f.Unkept)
// and an item netagent owns but no longer intends are not drift to leave.
func (a *Agent) leaveDrift(f host.Finding, reported map[dg.ItemRef]host.Drift) (leave, report bool) {
	if f.Unkept != nil || f.Old == nil || !a.st.intended.Contains(f.Ref) {
		return false, false
	}
	switch a.st.policy.adopted.Of(f.Ref) {
	case intent.DriftReport:
		reported[f.Ref] = f.Drift
		return true, true
	case intent.DriftIgnore:
		return true, false
	}
	return false, false
}

// newlyReported reports whether the last drift check did not report d
// already: a report item's difference is logged and counted once, not at
// every check that finds it again.
func (a *Agent) newlyReported(d host.Drift) bool {
	prev, was := a.st.policy.reported[d.Ref]
	if !was || (prev.New == nil) != (d.New == nil) {
		return true
	}
	return d.New != nil && !d.New.Equal(prev.New)
}
