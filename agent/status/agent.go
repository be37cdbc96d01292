package status

import (
	"fmt"
	"maps"
	"slices"

	"github.com/netagent/netagent/internal/plural"
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
	c := agentConds{ready: Condition{Type: CondReady, Status: true, Reason: "Ready"},
		degraded: Condition{Type: CondDegraded, Reason: "AsIntended"}}
	for _, src := range slices.Sorted(maps.Keys(in.Notes.Sources)) {
		msg := fmt.Sprintf("source %s: %s", src, in.Notes.Sources[src])
		if in.Notes.Unreachable[src] {
			c.degrade(ReasonSourceUnreachable, msg)
		}
		c.notReady("SourceNotRead", msg)
	}
	if in.Runs == 0 {
		c.notReady("NotStarted", "no reconcile yet")
	}
	if in.Notes.Intent != "" {
		c.notReady("IntentError", in.Notes.Intent)
	}
	if errs := cycleErrors(in.LastErr); len(errs) > 0 {
		c.notReady("Cycle", errs[0])
	}
	c.documents(in.Docs, memo)
	if n := len(in.Records.Failed(in.Current)); n > 0 {
		c.notReady("ItemsFailed", plural.N(n, "item")+" failed")
		c.degrade("ItemsFailed", plural.N(n, "item")+" failed")
	}
	if n := in.Records.NotConverging(); n > 0 {
		c.notReady("ItemsNotConverging", plural.N(n, "item")+" not converging")
	}
	if msg := leaseRefusedMessage(in.Refusals); msg != "" {
		c.notReady(ReasonLeaseRefused, msg)
		c.degrade(ReasonLeaseRefused, msg)
	}
	return c.ready, c.degraded
}

// agentConds are the agent's Ready and Degraded being derived: the first
// reason found for each stands.
type agentConds struct{ ready, degraded Condition }

func (c *agentConds) notReady(reason, msg string) {
	if c.ready.Status {
		c.ready.Status, c.ready.Reason, c.ready.Message = false, reason, msg
	}
}

func (c *agentConds) degrade(reason, msg string) {
	if !c.degraded.Status {
		c.degraded.Status, c.degraded.Reason, c.degraded.Message = true, reason, msg
	}
}

// documents takes in the documents' Ready and Degraded as memo holds them.
func (c *agentConds) documents(docs map[string]Document, memo Memo) {
	for _, name := range slices.Sorted(maps.Keys(docs)) {
		if d, ok := memo[memoKey{name, CondReady}]; !ok || !d.Status {
			c.notReady("DocumentNotReady", fmt.Sprintf("%s: %s", name, d.Message))
		}
		if d := memo[memoKey{name, CondDegraded}]; d.Status {
			c.degrade(d.Reason, fmt.Sprintf("%s: %s", name, d.Message))
		}
	}
}

// Line is the agent's status in one line, for the service manager.
func Line(in *Snapshot) string {
	n := in.Records.NotConverging()
	failed, blocked := len(in.Records.Failed(in.Current)), in.Records.Blocked(in.Current, in.Intended)
	if failed == 0 && blocked == 0 && n == 0 {
		return fmt.Sprintf("converged (%d reconciles)", in.Runs)
	}
	if n > 0 {
		return fmt.Sprintf("%d failed, %d blocked, %d not converging (%d reconciles)", failed, blocked, n, in.Runs)
	}
	return fmt.Sprintf("%d failed, %d blocked (%d reconciles)", failed, blocked, in.Runs)
}
