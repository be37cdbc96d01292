package agent

import (
	"maps"
	"slices"

	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/fleet"
)

// The agent's account of itself to its fleet (Config.Report): built by
// the loop at the end of every turn from what it holds, handed on only
// when it changed. It is cheap (no per-item status), since the loop
// builds it after every event.

// revisioned is a source that knows the store revision of the versions
// of its documents (StoreSource).
type revisioned interface {
	Revision(name string, raw []byte) (int64, bool)
}

// reportStatus hands the fleet status to Config.Report if it changed.
func (a *Agent) reportStatus() {
	if a.cfg.Report == nil || a.st == nil || a.st.current == nil {
		return
	}
	fs := a.fleetStatus()
	if last := a.reported; last != nil && sameReport(last, &fs) {
		return
	}
	a.reported = &fs
	a.cfg.Report(fs)
}

// sameReport compares two reports (Updated is the writer's).
func sameReport(x, y *fleet.Status) bool {
	return x.Version == y.Version && x.Digest == y.Digest && maps.Equal(x.Revisions, y.Revisions) &&
		x.Ready == y.Ready && x.Degraded == y.Degraded && slices.Equal(x.Conditions, y.Conditions) &&
		x.Converged.Equal(y.Converged) && x.Trial == nil && y.Trial == nil
}

// fleetStatus builds the agent's fleet status from the loop's state.
func (a *Agent) fleetStatus() fleet.Status {
	s := a.st
	out := fleet.Status{}
	if v := a.hist.current; v != nil {
		out.Version, out.Digest = uint64(v.Number), v.Digest
	}
	for name, d := range s.docs.docs {
		src, ok := a.source(d.source).(revisioned)
		if d.good == nil || !ok {
			continue
		}
		if rev, ok := src.Revision(name, d.goodRaw); ok {
			if out.Revisions == nil {
				out.Revisions = map[string]int64{}
			}
			out.Revisions[name] = rev
		}
	}
	ready, degraded := status.AgentConditions(a.snapshot(), s.conds)
	out.Ready, out.Degraded = ready.Status, degraded.Status
	out.Conditions = []fleet.Condition{
		{Type: ready.Type, Status: ready.Status, Reason: ready.Reason, Message: ready.Message},
		{Type: degraded.Type, Status: degraded.Status, Reason: degraded.Reason, Message: degraded.Message},
	}
	switch {
	case out.Ready:
		out.Converged = s.results.lastEnd
	case a.reported != nil:
		// Version, Digest and Revisions are those of the last converged
		// state (fleet.Status); the conditions say why this is not one.
		last := a.reported
		out.Version, out.Digest, out.Revisions, out.Converged = last.Version, last.Digest, last.Revisions, last.Converged
	default:
		out.Version, out.Digest, out.Revisions = 0, "", nil
	}
	return out
}
