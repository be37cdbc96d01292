package status

import (
	"slices"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/graphwalk"
)

// EachItem calls f for every intended item and every managed item of the
// current state that is not intended (on its way out), in no order: a
// walk of 100k items after every reconcile (Observe) need not sort them
// (see graphwalk.Nodes).
func EachItem(in *Snapshot, f func(dg.ItemRef)) {
	for _, n := range graphwalk.Nodes(in.Intended) {
		f(n.Ref())
	}
	for _, n := range graphwalk.Nodes(in.Current) {
		if ref := n.Ref(); !n.Item().External() && !in.Intended.Contains(ref) {
			f(ref)
		}
	}
}

// EachItemState calls f with the document, state and reason of every item
// of EachItem (those ItemState gives), in order. When no item is blocked,
// held or orphaned, which is the rule, an item's state comes from its node
// and its peer in the current state: a walk of 100k items after every
// reconcile then costs no lookup by reference (six per item otherwise).
func EachItemState(in *Snapshot, f func(file string, ref dg.ItemRef, state, why string)) {
	if len(in.Records.Reconciler.Blocked()) > 0 || in.Records.NotConverging() > 0 || len(in.Orphans) > 0 {
		EachItem(in, func(ref dg.ItemRef) {
			file, state, why := ItemState(in, ref)
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
	for _, n := range in.Intended.Nodes() {
		var have dg.Item
		var st dg.StateData
		cur := n.Peer(in.Current)
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
	leaving(in, f)
}

// leaving calls f for the managed items of the current state that are not
// intended.
func leaving(in *Snapshot, f func(file string, ref dg.ItemRef, state, why string)) {
	for _, n := range in.Current.Nodes() {
		if n.Item().External() {
			continue
		}
		if p := n.Peer(in.Intended); p != nil && p.Present() {
			continue
		}
		ref := n.Ref()
		file, state, why := ItemState(in, ref)
		f(file, ref, state, why)
	}
}

// itemStatuses lists the status of every item of EachItem, in ref order.
func itemStatuses(in *Snapshot) []ItemStatus {
	var out []ItemStatus
	EachItem(in, func(ref dg.ItemRef) { out = append(out, itemStatus(in, ref)) })
	slices.SortFunc(out, func(x, y ItemStatus) int { return x.Ref.Compare(y.Ref) })
	return out
}

func itemStatus(in *Snapshot, ref dg.ItemRef) ItemStatus {
	file, state, why := ItemState(in, ref)
	_, intended := in.Intended.Get(ref)
	is := ItemStatus{Ref: ref, Item: ref.String(), File: file, State: state, Intended: intended,
		Failures: in.Records.Failures(in.Current, ref)}
	if _, st, exists := in.Current.Lookup(ref); exists {
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
		b, _ := in.Records.Block(in.Current, in.Intended, ref)
		is.BlockedOn, is.Since = why, b.Since
	case StateNotConverging:
		u := in.Records.Unkept(ref)
		is.LastError, is.Failures, is.Since = why, u.Count, u.Since
	case StateOrphaned:
		is.Orphaned, is.Intended = why, false
	}
	return is
}

// ItemState returns an item's document, its state and, for a blocked or
// failed item, why.
func ItemState(in *Snapshot, ref dg.ItemRef) (file, state, why string) {
	want, intended := in.Intended.Get(ref)
	have, st, exists := in.Current.Lookup(ref)
	file = FileOf(in.Intended, ref)
	if file == "" {
		file = FileOf(in.Current, ref)
	}
	state = stateOf(intended, exists, want, have, st)
	if state == dg.StateFailed.String() && st.LastErr != nil {
		why = st.LastErr.Error()
	}
	if b, blocked := in.Records.Block(in.Current, in.Intended, ref); blocked && state != dg.StateFailed.String() {
		state, why = StateBlocked, b.Reason
		if _, text, missing := host.MissingNICReason(in.Intended, in.Current, in.blockedOn, in.Records.Reconciler.NumBlocked(), ref, b.Reason); missing {
			why = text
		}
	}
	if u := in.Records.Unkept(ref); u != nil && state != dg.StateFailed.String() && !st.State.InTransition() {
		state, why = StateNotConverging, u.Reason
	}
	if reason, kept := in.Orphans[ref]; kept && state == dg.StateCreated.String() {
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

// FileOf names the document of an item: the file of its subgraph.
func FileOf(g *dg.Graph, ref dg.ItemRef) string {
	p, _ := g.ScopeOf(ref)
	return render.FileOfSubgraph(p)
}

// blockedOn is a host.BlockedOn of the snapshot's records.
func (in *Snapshot) blockedOn(ref dg.ItemRef) (dg.ItemRef, bool) {
	b, blocked := in.Records.Block(in.Current, in.Intended, ref)
	return b.On, blocked
}
