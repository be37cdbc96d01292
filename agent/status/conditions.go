package status

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/plural"
)

// Memo remembers each condition's last status and since when it holds,
// keyed by document name ("": the agent's own) and condition type. The
// loop keeps it between builds: Build and Observe take the memo of the
// last and return the next, never changing the one they are given.
type Memo map[memoKey]Condition

type memoKey struct{ file, cond string }

// stamp sets c.Since from m: kept while the status stays, now when it
// flips; it records c in next.
func (m Memo) stamp(next Memo, file string, c Condition, now time.Time) Condition {
	key := memoKey{file, c.Type}
	if old, ok := m[key]; ok && old.Status == c.Status {
		c.Since = old.Since
	} else {
		c.Since = now
	}
	next[key] = c
	return c
}

// agentOnly returns a new memo holding the agent's own conditions of m
// (those of documents are stamped again by fileStatuses).
func (m Memo) agentOnly() Memo {
	out := make(Memo, len(m))
	for key, c := range m {
		if key.file == "" {
			out[key] = c
		}
	}
	return out
}

// Observe stamps the conditions of the documents after a reconcile, so
// that Since is when a condition changed, not when someone asked. It only
// counts item states per document (no ItemStatus values, no sorting), and
// returns the counts (the metrics take theirs from them) and the memo to
// keep.
func Observe(in *Snapshot, memo Memo, now time.Time) (Tallies, Memo) {
	t := Tallies{}
	EachItemState(in, t.Add)
	_, next := fileStatuses(in, t, memo, now)
	return t, next
}

// Tally counts the states of one document's items.
type Tally struct {
	count map[string]int
	total int
	// firstBad is "item: why" of the failed or blocked item first in ref
	// order (whatever the order they are added in), badRef its ref.
	firstBad string
	badRef   dg.ItemRef
}

// Tallies are the tallies of every document, by name.
type Tallies map[string]*Tally

// Add counts an item of file in state (why: the reason of a bad state).
func (ts Tallies) Add(file string, ref dg.ItemRef, state, why string) {
	t := ts[file]
	if t == nil {
		t = &Tally{count: map[string]int{}}
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
// its items, its conditions stamped by memo; it returns them with the
// memo to keep (the documents gone are forgotten).
func fileStatuses(in *Snapshot, ts Tallies, memo Memo, now time.Time) ([]FileStatus, Memo) {
	next := memo.agentOnly()
	out := make([]FileStatus, 0, len(in.Docs))
	for _, name := range slices.Sorted(maps.Keys(in.Docs)) {
		d := in.Docs[name]
		t := ts[name]
		if t == nil {
			t = &Tally{count: map[string]int{}}
		}
		fs := FileStatus{Name: name, Source: d.Source, Errors: slices.Concat(d.Errors, d.Conflicts), AcceptedAt: d.AcceptedAt, Items: t.total}
		conds := fileConditions(d, t)
		for i := range conds {
			conds[i] = memo.stamp(next, name, conds[i], now)
		}
		fs.Conditions = conds
		out = append(out, fs)
	}
	return out, next
}

// fileConditions derives Valid, Converged, Degraded and Ready.
func fileConditions(d Document, t *Tally) []Condition {
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

func validCondition(d Document) Condition {
	c := Condition{Type: CondValid, Status: d.Accepted(), Reason: "Accepted"}
	if c.Status && len(d.Conflicts) > 0 {
		c.Status, c.Reason = false, "Conflict"
		c.Message = fmt.Sprintf("%s also defined in another file, applied from neither: %s",
			plural.N(len(d.Conflicts), "object"), firstOf(d.Conflicts))
		return c
	}
	if c.Status {
		return c
	}
	c.Reason = "Rejected"
	if d.Gone {
		c.Reason = "RemovalRejected"
	}
	c.Message = fmt.Sprintf("%d problem(s): %s", len(d.Errors), firstOf(d.Errors))
	if d.Kept {
		c.Message += fmt.Sprintf("; keeping the version accepted at %s", d.AcceptedAt.Format(time.RFC3339))
	}
	return c
}

// convergence derives Converged and Degraded from the items' states.
func convergence(t *Tally) (conv, degr Condition) {
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
