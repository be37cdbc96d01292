package member

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/fleet"
)

// revSource is a source that knows the revision of one version of each
// document.
type revSource map[string]int64

func (s revSource) Name() string                               { return "rev" }
func (s revSource) Load() (map[string][]byte, error)           { return nil, nil }
func (s revSource) Watch(ctx context.Context, _ chan<- string) { <-ctx.Done() }
func (s revSource) Revision(name string, raw []byte) (int64, bool) {
	rev, ok := s[name]
	return rev, ok && string(raw) == "good"
}

// StatusOf: Ready, the status has the version, the revisions the sources
// know and when it converged; not Ready, it keeps those of the last
// report (none before one); SameReport ignores nothing else.
func TestStatusOf(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	src := revSource{"hosts/h1/a.json": 5}
	snap := Snapshot{Version: 3, Digest: "sha256:x", Converged: at,
		Docs:     []Doc{{Name: "hosts/h1/a.json", Raw: []byte("good"), Source: src}, {Name: "10-local.json", Raw: []byte("good")}},
		Ready:    status.Condition{Type: status.CondReady, Status: true, Reason: "Ready"},
		Degraded: status.Condition{Type: status.CondDegraded, Reason: "AsIntended"}}
	ready := StatusOf(snap, nil)
	if !ready.Ready || ready.Version != 3 || !maps.Equal(ready.Revisions, map[string]int64{"hosts/h1/a.json": 5}) ||
		!ready.Converged.Equal(at) || len(ready.Conditions) != 2 || ready.Conditions[1].Reason != "AsIntended" {
		t.Errorf("ready: %+v", ready)
	}
	if !SameReport(&ready, &ready) {
		t.Error("a report is not the same as itself")
	}
	snap.Version, snap.Ready = 4, status.Condition{Type: status.CondReady, Reason: "ItemsFailed", Message: "1 item failed"}
	failing := StatusOf(snap, &ready)
	if failing.Ready || failing.Version != 3 || failing.Revisions["hosts/h1/a.json"] != 5 || !failing.Converged.Equal(at) ||
		failing.Conditions[0].Message != "1 item failed" || SameReport(&ready, &failing) {
		t.Errorf("not ready after ready: %+v", failing)
	}
	if first := StatusOf(snap, nil); first.Version != 0 || first.Revisions != nil || !first.Converged.IsZero() {
		t.Errorf("not ready before any report: %+v", first)
	}
	withTrial := ready
	withTrial.Trial = &fleet.Trial{State: FleetTrialPending}
	if SameReport(&withTrial, &withTrial) {
		t.Error("a report with a trial is the same as another: the writer must compare it")
	}
}
