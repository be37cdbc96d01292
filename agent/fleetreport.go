package agent

import (
	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/agent/status"
)

// The agent's account of itself to its fleet (Config.Report): the loop
// takes a snapshot of what it holds at the end of every turn; package
// member builds the fleet.Status of it, handed on only when it changed.

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
	snap.Ready, snap.Degraded = status.AgentConditions(a.snapshot(), s.conds)
	return snap
}
