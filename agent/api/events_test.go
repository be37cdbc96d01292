package api

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/status"
)

// The events between two statuses: a trial that starts and ends, an item
// that drifts and one whose drift is gone, a document that goes away.
func TestEventsBetween(t *testing.T) {
	now := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
	file := status.FileStatus{Name: "a.json", Conditions: []status.Condition{{Type: status.CondValid, Status: true, Reason: "Accepted"}}}
	before := &status.Status{Ready: true, Files: []status.FileStatus{file},
		Drifted: []status.DriftStatus{{Item: "route/r", File: "a.json", What: "changed", Fields: []status.DriftField{{Field: "metric", Intended: "10", Running: "20"}}}}}
	during := &status.Status{Ready: true, Trial: &status.TrialStatus{Since: now},
		Drifted: []status.DriftStatus{{Item: "sysctl/s", File: "b.json", What: "gone"}}}
	after := &status.Status{Ready: true, LastTrial: &status.TrialOutcome{Result: "reverted", Reason: "timeout", At: now}}
	lines := func(old, cur *status.Status) []string {
		var out []string
		for _, e := range EventsBetween(SnapshotOf(old), SnapshotOf(cur), cur, now) {
			out = append(out, e.String())
		}
		return out
	}
	got := strings.Join(lines(before, during), "\n")
	for _, want := range []string{"trial none -> pending", "condition a.json Valid: True -> none",
		"drift route/r (a.json): drifted -> none", "drift sysctl/s (b.json): none -> drifted: gone"} {
		if !strings.Contains(got, want) {
			t.Errorf("events lack %q:\n%s", want, got)
		}
	}
	if got := lines(during, after); len(got) != 2 || got[0] != "trial pending -> reverted: timeout" {
		t.Errorf("trial end: %q", got)
	}
	if got := lines(after, after); len(got) != 0 {
		t.Errorf("events without a change: %q", got)
	}
}

// The events of an item, a link, a condition and readiness, each with the
// format and time, in the order of their kinds.
func TestEventsBetweenItemsLinksReady(t *testing.T) {
	now := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
	cond := func(ok bool, reason string) []status.FileStatus {
		return []status.FileStatus{{Name: "a.json", Conditions: []status.Condition{{Type: status.CondConverged, Status: ok, Reason: reason}}}}
	}
	old := &status.Status{Ready: true, Files: cond(true, "Converged"),
		Items: []status.ItemStatus{{Item: "route/r", File: "a.json", State: "created"}},
		Links: []status.LinkStatus{{Name: "eth0", AdminUp: true, Carrier: true, OperUp: true}}}
	cur := &status.Status{Files: cond(false, "Blocked"),
		Items: []status.ItemStatus{{Item: "route/r", File: "a.json", State: status.StateBlocked, BlockedOn: "no carrier"}},
		Links: []status.LinkStatus{{Name: "eth0", AdminUp: true}, {Name: "eth1"}}}
	var got []string
	for _, e := range EventsBetween(SnapshotOf(old), SnapshotOf(cur), cur, now) {
		if e.Format != EventFormat || !e.Time.Equal(now) {
			t.Errorf("event without format or time: %+v", e)
		}
		got = append(got, e.String())
	}
	want := []string{
		"condition a.json Converged: True -> False (Blocked)",
		"item route/r (a.json): created -> blocked: no carrier",
		"link eth0: up -> no-carrier",
		"link eth1: none -> admin-down",
		"ready true -> false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
