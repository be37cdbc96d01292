package agent

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

// condMemo remembers each condition's last status and since when it holds,
// keyed by document name and condition type.
type condMemo map[[2]string]Condition

// stamp sets c.Since: kept while the status stays, now when it flips.
func (m condMemo) stamp(file string, c Condition, now time.Time) Condition {
	key := [2]string{file, c.Type}
	if old, ok := m[key]; ok && old.Status == c.Status {
		c.Since = old.Since
	} else {
		c.Since = now
	}
	m[key] = c
	return c
}

// forget drops the memos of documents no longer known.
func (m condMemo) forget(known func(string) bool) {
	for key := range m {
		if !known(key[0]) {
			delete(m, key)
		}
	}
}

// observeConditions updates the condition memos after a reconcile, so
// that Since is when a condition changed, not when someone asked. It only
// counts item states per document (no ItemStatus values, no sorting), and
// returns the counts (the metrics take theirs from them).
func (a *Agent) observeConditions() tallies {
	t := tallies{}
	a.eachItemState(t.add)
	a.fileStatuses(t)
	return t
}

// tally counts the states of one document's items.
type tally struct {
	count map[string]int
	total int
	// firstBad is "item: why" of the failed or blocked item first in ref
	// order (whatever the order they are added in), badRef its ref.
	firstBad string
	badRef   dg.ItemRef
}

// tallies are the tallies of every document, by name.
type tallies map[string]*tally

func (ts tallies) add(file string, ref dg.ItemRef, state, why string) {
	t := ts[file]
	if t == nil {
		t = &tally{count: map[string]int{}}
		ts[file] = t
	}
	t.count[state]++
	t.total++
	bad := state == StateBlocked || state == dg.StateFailed.String() || state == StateNotConverging
	if bad && (t.firstBad == "" || ref.Compare(t.badRef) < 0) {
		t.firstBad, t.badRef = ref.String()+": "+why, ref
	}
}

// fileStatuses computes the status of every document from the tallies of
// its items.
func (a *Agent) fileStatuses(ts tallies) []FileStatus {
	s := a.st
	now := time.Now()
	out := make([]FileStatus, 0, len(s.docs.docs))
	for _, name := range slices.Sorted(maps.Keys(s.docs.docs)) {
		d := s.docs.docs[name]
		t := ts[name]
		if t == nil {
			t = &tally{count: map[string]int{}}
		}
		fs := FileStatus{Name: name, Source: d.source, Errors: slices.Concat(d.errs, d.conflicts), AcceptedAt: d.goodAt, Items: t.total}
		conds := fileConditions(d, t)
		for i := range conds {
			conds[i] = s.conds.stamp(name, conds[i], now)
		}
		fs.Conditions = conds
		out = append(out, fs)
	}
	s.conds.forget(func(n string) bool { return n == "" || s.docs.docs[n] != nil }) // "": the agent's own (status)
	return out
}

// fileConditions derives Valid, Converged, Degraded and Ready.
func fileConditions(d *doc, t *tally) []Condition {
	valid := validCondition(d)
	conv, degr := convergence(t)
	ready := Condition{Type: CondReady, Status: valid.Status && conv.Status, Reason: "Ready"}
	switch {
	case !valid.Status:
		ready.Reason, ready.Message = "NotValid", valid.Message
	case !conv.Status:
		ready.Reason, ready.Message = conv.Reason, conv.Message
	}
	return []Condition{valid, conv, degr, ready}
}

func validCondition(d *doc) Condition {
	c := Condition{Type: CondValid, Status: d.accepted(), Reason: "Accepted"}
	if c.Status && len(d.conflicts) > 0 {
		c.Status, c.Reason = false, "Conflict"
		c.Message = fmt.Sprintf("%d object(s) also defined in another file, applied from neither: %s",
			len(d.conflicts), firstOf(d.conflicts))
		return c
	}
	if c.Status {
		return c
	}
	c.Reason = "Rejected"
	if d.gone {
		c.Reason = "RemovalRejected"
	}
	c.Message = fmt.Sprintf("%d problem(s): %s", len(d.errs), firstOf(d.errs))
	if d.good != nil {
		c.Message += fmt.Sprintf("; keeping the version accepted at %s", d.goodAt.Format(time.RFC3339))
	}
	return c
}

// convergence derives Converged and Degraded from the items' states.
func convergence(t *tally) (conv, degr Condition) {
	failed, blocked, unkept := t.count[dg.StateFailed.String()], t.count[StateBlocked], t.count[StateNotConverging]
	notDone := t.total - t.count[dg.StateCreated.String()]
	conv = Condition{Type: CondConverged, Status: notDone == 0, Reason: "Converged"}
	if notDone > 0 {
		conv.Reason, conv.Message = "InProgress", describeCounts(t.count)
		if failed+blocked > 0 {
			conv.Reason = "ItemsNotCreated"
		} else if unkept > 0 {
			conv.Reason = "ItemsNotConverging"
		}
	}
	degr = Condition{Type: CondDegraded, Status: failed+blocked+unkept > 0, Reason: "AsIntended"}
	switch {
	case failed > 0:
		degr.Reason, degr.Message = "ItemsFailed", t.firstBad
	case unkept > 0:
		degr.Reason, degr.Message = "ItemsNotConverging", t.firstBad
	case blocked > 0:
		degr.Reason, degr.Message = "ItemsBlocked", t.firstBad
	}
	return conv, degr
}

func describeCounts(count map[string]int) string {
	var parts []string
	for _, st := range slices.Sorted(maps.Keys(count)) {
		if st != dg.StateCreated.String() {
			parts = append(parts, fmt.Sprintf("%d %s", count[st], st))
		}
	}
	return strings.Join(parts, ", ")
}

func firstOf(list []string) string {
	if len(list) == 0 {
		return ""
	}
	if len(list) == 1 {
		return list[0]
	}
	return fmt.Sprintf("%s (and %d more)", list[0], len(list)-1)
}

// leaseRefusedMessage is the condition message of the refusals ("":
// none).
func leaseRefusedMessage(refused map[dg.ItemRef]string) string {
	var lines []string
	for _, r := range LeaseRefusals(refused) {
		lines = append(lines, r.String())
	}
	return firstOf(lines)
}
