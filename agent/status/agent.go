package status

import (
	"fmt"
	"maps"
	"slices"
)

// ReasonSourceUnreachable is the agent's Degraded while an intent source
// cannot be reached (Notes.Unreachable): the documents it last delivered
// stay applied.
const ReasonSourceUnreachable = "IntentSourceUnreachable"

// AgentConditions derives the agent's Ready and Degraded (without Since)
// as Build does, without per-item status, the documents' conditions as
// memo holds them: Ready as Status.Ready; Degraded when an intent source
// is unreachable, a document is degraded, an item failed or a lease is
// refused. It is cheap: the fleet report calls it after every turn.
func AgentConditions(in *Snapshot, memo Memo) (ready, degraded Condition) {
	ready = Condition{Type: CondReady, Status: true, Reason: "Ready"}
	degraded = Condition{Type: CondDegraded, Reason: "AsIntended"}
	notReady := func(reason, msg string) {
		if ready.Status {
			ready.Status, ready.Reason, ready.Message = false, reason, msg
		}
	}
	degrade := func(reason, msg string) {
		if !degraded.Status {
			degraded.Status, degraded.Reason, degraded.Message = true, reason, msg
		}
	}
	for _, src := range slices.Sorted(maps.Keys(in.Notes.Sources)) {
		msg := fmt.Sprintf("source %s: %s", src, in.Notes.Sources[src])
		if in.Notes.Unreachable[src] {
			degrade(ReasonSourceUnreachable, msg)
		}
		notReady("SourceNotRead", msg)
	}
	if in.Runs == 0 {
		notReady("NotStarted", "no reconcile yet")
	}
	if in.Notes.Intent != "" {
		notReady("IntentError", in.Notes.Intent)
	}
	if errs := cycleErrors(in.LastErr); len(errs) > 0 {
		notReady("Cycle", errs[0])
	}
	for _, name := range slices.Sorted(maps.Keys(in.Docs)) {
		if c, ok := memo[memoKey{name, CondReady}]; !ok || !c.Status {
			notReady("DocumentNotReady", fmt.Sprintf("%s: %s", name, c.Message))
		}
		if c := memo[memoKey{name, CondDegraded}]; c.Status {
			degrade(c.Reason, fmt.Sprintf("%s: %s", name, c.Message))
		}
	}
	if n := len(in.Records.Failed(in.Current)); n > 0 {
		notReady("ItemsFailed", fmt.Sprintf("%d item(s) failed", n))
		degrade("ItemsFailed", fmt.Sprintf("%d item(s) failed", n))
	}
	if n := in.Records.NotConverging(); n > 0 {
		notReady("ItemsNotConverging", fmt.Sprintf("%d item(s) not converging", n))
	}
	if msg := leaseRefusedMessage(in.Refusals); msg != "" {
		notReady(ReasonLeaseRefused, msg)
		degrade(ReasonLeaseRefused, msg)
	}
	return ready, degraded
}
