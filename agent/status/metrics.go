package status

import dg "github.com/netagent/netagent/depgraph"

// ItemStates lists every state of ItemStatus.State, so that each series of
// the metrics' item counts exists from the start.
var ItemStates = []string{
	dg.StateCreated.String(), dg.StateFailed.String(), dg.StateCreating.String(), dg.StateModifying.String(),
	dg.StateDeleting.String(), StateBlocked, StatePending, StateNotConverging, StateOrphaned,
}

// ZeroStates counts 0 items of every state of ItemStates.
func ZeroStates() map[string]int {
	m := make(map[string]int, len(ItemStates))
	for _, s := range ItemStates {
		m[s] = 0
	}
	return m
}

// ByState sums the tallies of every document by item state, every known
// state included.
func (ts Tallies) ByState() map[string]int {
	out := ZeroStates()
	for _, t := range ts {
		for state, n := range t.count {
			out[state] += n
		}
	}
	return out
}

// Converged reports whether the counts by state (ByState) are those of a
// converged state: every item is created (or kept as an orphan).
func Converged(byState map[string]int) bool {
	for state, n := range byState {
		if n > 0 && state != dg.StateCreated.String() && state != StateOrphaned {
			return false
		}
	}
	return true
}

// ItemCounts counts the items of in by state (ByState of their tallies).
func ItemCounts(in *Snapshot) map[string]int {
	t := Tallies{}
	EachItemState(in, t.Add)
	return t.ByState()
}
