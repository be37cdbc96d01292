package agent

import (
	"strings"
	"time"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/agent/status"
)

// notes are the errors the loop met outside any item.
type notes struct {
	sources map[string]string // source → why it cannot be read
	intent  string            // why the accepted intents could not be resolved or rendered
}

func (n *notes) setIntent(err error) {
	n.intent = ""
	if err != nil {
		n.intent = err.Error()
	}
}

// view is the notes as package status reads them.
func (n *notes) view() status.Notes {
	out := status.Notes{Sources: n.sources, Intent: n.intent}
	for src, msg := range n.sources {
		// Load's error, as the loop keeps it: see StoreSource.Load.
		if strings.HasPrefix(msg, member.ErrSourceUnreachable.Error()) {
			if out.Unreachable == nil {
				out.Unreachable = map[string]bool{}
			}
			out.Unreachable[src] = true
		}
	}
	return out
}

// view is the documents as package status reads them.
func (ds *docSet) view() map[string]status.Document {
	out := make(map[string]status.Document, len(ds.docs))
	for name, d := range ds.docs {
		out[name] = status.Document{Source: d.source, Errors: d.errs, Conflicts: d.conflicts,
			Gone: d.gone, Kept: d.good != nil, AcceptedAt: d.goodAt}
	}
	return out
}

// snapshot gathers what the status is built from (package status), the
// leases aside (status adds them): cheap, the fleet report takes one
// after every turn.
func (a *Agent) snapshot() *status.Snapshot {
	s := a.st
	r := &s.results
	in := &status.Snapshot{Docs: s.docs.view(), Intended: s.intended, Current: s.current, Records: r.view(),
		Orphans: s.orphans, Refusals: a.refusals, Notes: s.notes.view(),
		Runs: r.runs, LastReconcile: r.lastEnd, LastReasons: r.lastReasons, LastErr: r.err,
		NextRetry: s.retry.at, NextDriftCheck: s.drift.at, LastTrial: s.lastTrial, Reported: s.policy.reported}
	if t := s.trial; t != nil {
		in.Trial = &t.status
	}
	if v := a.hist.current; v != nil {
		in.Version, in.Digest = v.Number, v.Digest
	}
	if o := a.hist.override; o != nil {
		in.OverrideVersion = o.Version
	}
	return in
}

// status builds the Status from the loop's state.
func (a *Agent) status() status.Status {
	in := a.snapshot()
	in.Leases = a.st.leases.Statuses()
	st, memo := status.Build(in, a.st.conds, time.Now())
	a.st.conds = memo
	return st
}

// observeConditions stamps the conditions after a reconcile (or a change
// of the documents without one), so that Since is when a condition
// changed, not when someone asked; it returns the items' tallies (the
// metrics take their counts from them).
func (a *Agent) observeConditions() status.Tallies {
	t, memo := status.Observe(a.snapshot(), a.st.conds, time.Now())
	a.st.conds = memo
	return t
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
