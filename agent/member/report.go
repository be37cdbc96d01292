package member

import (
	"maps"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/source"
	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/fleet"
)

// The agent's account of itself to its fleet (the agent's Config.Report):
// built from a Snapshot the loop takes at the end of every turn, handed on
// only when it changed (SameReport). It is cheap (no per-item status),
// since the loop builds it after every event.

// Snapshot is what the fleet status says of the agent, as its loop holds
// it at the end of a turn.
type Snapshot struct {
	// Version and Digest are those of the version in use (0, "": none).
	Version uint64
	Digest  string
	// Docs are the accepted documents (their last good content).
	Docs []Doc
	// Ready and Degraded are the agent's conditions (without Since).
	Ready, Degraded status.Condition
	// Converged is when the last reconcile ended.
	Converged time.Time
}

// Doc is one accepted document of a Snapshot and the source it came from.
type Doc struct {
	Name   string
	Raw    []byte
	Source source.IntentSource // nil: its source is gone
}

// Revisioned is a source that knows the store revision of the versions
// of its documents (StoreSource).
type Revisioned interface {
	Revision(name string, raw []byte) (int64, bool)
}

// StatusOf is the fleet status of snap; last is the one reported before
// (nil: none). Version, Digest and Revisions are those of the last
// converged state (fleet.Status): while the agent is not Ready they stay
// last's, and its conditions say why.
func StatusOf(snap Snapshot, last *fleet.Status) fleet.Status {
	out := fleet.Status{Version: snap.Version, Digest: snap.Digest, Revisions: revisions(snap.Docs)}
	ready, degraded := snap.Ready, snap.Degraded
	out.Ready, out.Degraded = ready.Status, degraded.Status
	out.Conditions = []fleet.Condition{
		{Type: ready.Type, Status: ready.Status, Reason: ready.Reason, Message: ready.Message},
		{Type: degraded.Type, Status: degraded.Status, Reason: degraded.Reason, Message: degraded.Message},
	}
	switch {
	case out.Ready:
		out.Converged = snap.Converged
	case last != nil:
		out.Version, out.Digest, out.Revisions, out.Converged = last.Version, last.Digest, last.Revisions, last.Converged
	default:
		out.Version, out.Digest, out.Revisions = 0, "", nil
	}
	return out
}

// revisions are the store revisions of the documents whose source knows
// them (nil: none).
func revisions(docs []Doc) map[string]int64 {
	var out map[string]int64
	for _, d := range docs {
		src, ok := d.Source.(Revisioned)
		if !ok {
			continue
		}
		if rev, ok := src.Revision(d.Name, d.Raw); ok {
			if out == nil {
				out = map[string]int64{}
			}
			out[d.Name] = rev
		}
	}
	return out
}

// SameReport compares two reports (Updated is the writer's): the loop
// hands on a report only when it is not the same as the last.
func SameReport(x, y *fleet.Status) bool {
	return x.Version == y.Version && x.Digest == y.Digest && maps.Equal(x.Revisions, y.Revisions) &&
		x.Ready == y.Ready && x.Degraded == y.Degraded && slices.Equal(x.Conditions, y.Conditions) &&
		x.Converged.Equal(y.Converged) && x.Trial == nil && y.Trial == nil
}
