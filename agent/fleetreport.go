package agent

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/netagent/netagent/agent/member"
)

// The agent's account of itself to its fleet (Config.Report): the loop
// takes a snapshot of what it holds at the end of every turn; package
// member builds the fleet.Status of it, handed on only when it changed.

// Agent-level conditions of Status.Conditions and fleet.Status.
const (
	ReasonSourceUnreachable = "IntentSourceUnreachable"
)

// reportStatus hands the fleet status to Config.Report if it changed.
func (a *Agent) reportStatus() {
	if a.cfg.Report == nil || a.st == nil || a.st.current == nil {
		return
	}
	fs := member.StatusOf(a.reportSnapshot(), a.reported)
	if last := a.reported; last != nil && member.SameReport(last, &fs) {
		return
	}
	a.reported = &fs
	a.cfg.Report(fs)
}

// reportSnapshot is what the fleet status says of the loop's state.
func (a *Agent) reportSnapshot() member.Snapshot {
	s := a.st
	snap := member.Snapshot{Converged: s.results.lastEnd}
	if v := a.hist.current; v != nil {
		snap.Version, snap.Digest = uint64(v.Number), v.Digest
	}
	for name, d := range s.docs.docs {
		if d.good != nil {
			snap.Docs = append(snap.Docs, member.Doc{Name: name, Raw: d.goodRaw, Source: a.source(d.source)})
		}
	}
	snap.Ready, snap.Degraded = a.agentConditions()
	return snap
}

// agentConditions derives the agent's Ready and Degraded (without Since)
// from the loop's state as status does, without per-item status: Ready
// as Status.Ready; Degraded when an intent source is unreachable or a
// document is degraded.
func (a *Agent) agentConditions() (ready, degraded Condition) {
	s := a.st
	r := &s.results
	ready = Condition{Type: CondReady, Status: true, Reason: "Ready"}
	degraded = Condition{Type: CondDegraded, Reason: "AsIntended"}
	notReady := func(reason, msg string) {
		if ready.Status {
			ready.Status, ready.Reason, ready.Message = false, reason, msg
		}
	}
	for _, src := range slices.Sorted(maps.Keys(s.notes.sources)) {
		msg := s.notes.sources[src]
		// Load's error, as the loop keeps it: see StoreSource.Load.
		if strings.HasPrefix(msg, member.ErrSourceUnreachable.Error()) && !degraded.Status {
			degraded.Status, degraded.Reason = true, ReasonSourceUnreachable
			degraded.Message = fmt.Sprintf("source %s: %s", src, msg)
		}
		notReady("SourceNotRead", fmt.Sprintf("source %s: %s", src, msg))
	}
	if r.runs == 0 {
		notReady("NotStarted", "no reconcile yet")
	}
	if s.notes.intent != "" {
		notReady("IntentError", s.notes.intent)
	}
	if errs := cycleErrors(r.err); len(errs) > 0 {
		notReady("Cycle", errs[0])
	}
	for _, name := range slices.Sorted(maps.Keys(s.docs.docs)) {
		if c, ok := s.conds[[2]string{name, CondReady}]; !ok || !c.Status {
			notReady("DocumentNotReady", fmt.Sprintf("%s: %s", name, c.Message))
		}
		if c := s.conds[[2]string{name, CondDegraded}]; c.Status && !degraded.Status {
			degraded.Status, degraded.Reason, degraded.Message = true, c.Reason, fmt.Sprintf("%s: %s", name, c.Message)
		}
	}
	if n := len(r.failed(s.current)); n > 0 {
		notReady("ItemsFailed", fmt.Sprintf("%d item(s) failed", n))
		if !degraded.Status {
			degraded.Status, degraded.Reason, degraded.Message = true, "ItemsFailed", fmt.Sprintf("%d item(s) failed", n)
		}
	}
	if n := r.notConverging(); n > 0 {
		notReady("ItemsNotConverging", fmt.Sprintf("%d item(s) not converging", n))
	}
	if msg := leaseRefusedMessage(a.refusals); msg != "" {
		notReady(ReasonLeaseRefused, msg)
		if !degraded.Status {
			degraded.Status, degraded.Reason, degraded.Message = true, ReasonLeaseRefused, msg
		}
	}
	return ready, degraded
}
