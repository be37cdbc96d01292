package agent

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
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

func (n *notes) list() []string {
	var out []string
	for _, src := range slices.Sorted(maps.Keys(n.sources)) {
		out = append(out, fmt.Sprintf("source %s: %s", src, n.sources[src]))
	}
	if n.intent != "" {
		out = append(out, n.intent)
	}
	return out
}

// status builds the Status from the loop's state.
func (a *Agent) status() Status {
	s := a.st
	r := &s.results
	out := Status{
		Reconciles:     r.runs,
		LastReconcile:  r.lastEnd,
		LastReasons:    r.lastReasons,
		NextRetry:      s.retry.at,
		NextDriftCheck: s.drift.at,
		Errors:         append(s.notes.list(), cycleErrors(r.err)...),
		Items:          a.itemStatuses(),
		Links:          linkStatuses(s.current),
	}
	t := tallies{}
	for _, is := range out.Items {
		t.add(is.File, is.Ref, is.State, firstNonEmpty(is.BlockedOn, is.LastError))
	}
	out.Files = a.fileStatuses(t)
	a.versionStatus(&out)
	a.trialStatus(&out)
	out.Drifted = a.driftStatuses()
	out.Leases = a.st.leases.Statuses()
	out.Ready = r.runs > 0 && len(out.Errors) == 0 && allReady(out.Files) && noneFailed(out.Items) && len(a.refusals) == 0
	ready, degraded := a.agentConditions()
	now := time.Now()
	out.Conditions = []Condition{s.conds.stamp("", ready, now), s.conds.stamp("", degraded, now)}
	return out
}

// cycleErrors lists the errors of the last run that no failed item
// explains: dependency cycles.
func cycleErrors(err error) []string {
	var out []string
	for _, e := range unjoin(err) {
		if errors.Is(e, reconciler.ErrCycle) {
			out = append(out, e.Error())
		}
	}
	return out
}

func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func allReady(files []FileStatus) bool {
	for _, f := range files {
		if !f.Conditions[3].Status {
			return false
		}
	}
	return true
}

func noneFailed(items []ItemStatus) bool {
	for _, it := range items {
		if it.State == dg.StateFailed.String() || it.State == StateNotConverging {
			return false
		}
	}
	return true
}

// eachItem calls f for every intended item and every managed item of the
// current state that is not intended (on its way out), in no order: a
// walk of 100k items after every reconcile (observeConditions) need not
// sort them (see nodesOf).
func (a *Agent) eachItem(f func(dg.ItemRef)) {
	s := a.st
	for _, n := range nodesOf(s.intended) {
		f(n.Ref())
	}
	for _, n := range nodesOf(s.current) {
		if ref := n.Ref(); !n.Item().External() && !s.intended.Contains(ref) {
			f(ref)
		}
	}
}

// eachItemState calls f with the document, state and reason of every item
// of eachItem (those itemState gives), in order. When no item is blocked,
// held or orphaned, which is the rule, an item's state comes from its node
// and its peer in the current state: a walk of 100k items after every
// reconcile then costs no lookup by reference (six per item otherwise).
func (a *Agent) eachItemState(f func(file string, ref dg.ItemRef, state, why string)) {
	s := a.st
	r := &s.results
	if len(r.records.Blocked()) > 0 || r.notConverging() > 0 || len(s.orphans) > 0 {
		a.eachItem(func(ref dg.ItemRef) {
			file, state, why := a.itemState(ref)
			f(file, ref, state, why)
		})
		return
	}
	var scope, file string // the last subgraph's document: most items share one
	fileIn := func(n *dg.Node) string {
		if sc := n.Scope(); sc != scope {
			scope, file = sc, render.FileOfSubgraph(sc)
		}
		return file
	}
	for _, n := range s.intended.Nodes() {
		var have dg.Item
		var st dg.StateData
		cur := n.Peer(s.current)
		exists := cur != nil && cur.Present()
		if exists {
			have, st = cur.Item(), cur.State()
		}
		file := fileIn(n)
		if file == "" && exists {
			file = fileIn(cur)
		}
		state, why := stateOf(true, exists, n.Item(), have, st), ""
		if state == dg.StateFailed.String() && st.LastErr != nil {
			why = st.LastErr.Error()
		}
		f(file, n.Ref(), state, why)
	}
	for _, n := range s.current.Nodes() {
		if n.Item().External() {
			continue
		}
		if p := n.Peer(s.intended); p != nil && p.Present() {
			continue
		}
		ref := n.Ref()
		file, state, why := a.itemState(ref)
		f(file, ref, state, why)
	}
}

// itemStatuses lists the status of every item of eachItem, in ref order.
func (a *Agent) itemStatuses() []ItemStatus {
	var out []ItemStatus
	a.eachItem(func(ref dg.ItemRef) { out = append(out, a.itemStatus(ref)) })
	slices.SortFunc(out, func(x, y ItemStatus) int { return x.Ref.Compare(y.Ref) })
	return out
}

func (a *Agent) itemStatus(ref dg.ItemRef) ItemStatus {
	s := a.st
	file, state, why := a.itemState(ref)
	_, intended := s.intended.Get(ref)
	is := ItemStatus{Ref: ref, Item: ref.String(), File: file, State: state, Intended: intended,
		Failures: s.results.failures(s.current, ref)}
	if _, st, exists := s.current.Lookup(ref); exists {
		is.Since = st.Since
		if st.LastOp != dg.OpNone {
			is.LastOp = st.LastOp.String()
		}
		if st.LastErr != nil {
			is.LastError = st.LastErr.Error()
		}
	}
	switch state {
	case StateBlocked:
		b, _ := s.results.block(s.current, s.intended, ref)
		is.BlockedOn, is.Since = why, b.Since
	case StateNotConverging:
		u := s.results.unkeptOf(ref)
		is.LastError, is.Failures, is.Since = why, u.Count, u.Since
	case StateOrphaned:
		is.Orphaned, is.Intended = why, false
	}
	return is
}

// itemState returns an item's document, its state and, for a blocked or
// failed item, why.
func (a *Agent) itemState(ref dg.ItemRef) (file, state, why string) {
	s := a.st
	want, intended := s.intended.Get(ref)
	have, st, exists := s.current.Lookup(ref)
	file = fileOf(s.intended, ref)
	if file == "" {
		file = fileOf(s.current, ref)
	}
	state = stateOf(intended, exists, want, have, st)
	if state == dg.StateFailed.String() && st.LastErr != nil {
		why = st.LastErr.Error()
	}
	if b, blocked := s.results.block(s.current, s.intended, ref); blocked && state != dg.StateFailed.String() {
		state, why = StateBlocked, b.Reason
	}
	if u := s.results.unkeptOf(ref); u != nil && state != dg.StateFailed.String() && !st.State.InTransition() {
		state, why = StateNotConverging, u.Reason
	}
	if reason, kept := s.orphans[ref]; kept && state == dg.StateCreated.String() {
		state, why = StateOrphaned, reason
	}
	return file, state, why
}

func stateOf(intended, exists bool, want, have dg.Item, st dg.StateData) string {
	switch {
	case !exists:
		return StatePending
	case st.State == dg.StateFailed || st.State.InTransition():
		return st.State.String()
	case intended && want.Equal(have):
		return dg.StateCreated.String()
	}
	return StatePending
}

// fileOf names the document of an item: the file of its subgraph.
func fileOf(g *dg.Graph, ref dg.ItemRef) string {
	p, _ := g.ScopeOf(ref)
	return render.FileOfSubgraph(p)
}

func linkStatuses(g *dg.Graph) []LinkStatus {
	var out []LinkStatus
	for _, ref := range g.Refs() {
		if ref.Type != items.TypeLink {
			continue
		}
		if l, ok := currentLink(g, ref.Name); ok {
			out = append(out, LinkStatus{Name: l.IfName, Carrier: l.Carrier, OperUp: l.OperUp, AdminUp: l.AdminUp})
		}
	}
	return out
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
