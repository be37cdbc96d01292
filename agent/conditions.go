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
// that Since is when a condition changed, not when someone asked.
func (a *Agent) observeConditions() {
	a.fileStatuses(a.itemStatuses())
}

// fileStatuses computes the status of every document from the statuses
// of its items.
func (a *Agent) fileStatuses(itemStats []ItemStatus) []FileStatus {
	s := a.st
	byFile := map[string][]ItemStatus{}
	for _, is := range itemStats {
		byFile[is.File] = append(byFile[is.File], is)
	}
	now := time.Now()
	out := make([]FileStatus, 0, len(s.docs.docs))
	for _, name := range slices.Sorted(maps.Keys(s.docs.docs)) {
		d := s.docs.docs[name]
		fs := FileStatus{Name: name, Source: d.source, Errors: d.errs, AcceptedAt: d.goodAt, Items: len(byFile[name])}
		conds := fileConditions(d, byFile[name])
		for i := range conds {
			conds[i] = s.conds.stamp(name, conds[i], now)
		}
		fs.Conditions = conds
		out = append(out, fs)
	}
	s.conds.forget(func(n string) bool { return s.docs.docs[n] != nil })
	return out
}

// fileConditions derives Valid, Converged, Degraded and Ready.
func fileConditions(d *doc, itemStats []ItemStatus) []Condition {
	valid := validCondition(d)
	conv, degr := convergence(itemStats)
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
func convergence(itemStats []ItemStatus) (conv, degr Condition) {
	count := map[string]int{}
	var firstBad string
	for _, is := range itemStats {
		count[is.State]++
		if firstBad == "" && (is.State == StateBlocked || is.State == dg.StateFailed.String()) {
			firstBad = is.Item + ": " + firstNonEmpty(is.BlockedOn, is.LastError)
		}
	}
	failed, blocked := count[dg.StateFailed.String()], count[StateBlocked]
	notDone := len(itemStats) - count[dg.StateCreated.String()]
	conv = Condition{Type: CondConverged, Status: notDone == 0, Reason: "Converged"}
	if notDone > 0 {
		conv.Reason, conv.Message = "InProgress", describeCounts(count)
		if failed+blocked > 0 {
			conv.Reason = "ItemsNotCreated"
		}
	}
	degr = Condition{Type: CondDegraded, Status: failed+blocked > 0, Reason: "AsIntended"}
	switch {
	case failed > 0:
		degr.Reason, degr.Message = "ItemsFailed", firstBad
	case blocked > 0:
		degr.Reason, degr.Message = "ItemsBlocked", firstBad
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

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
