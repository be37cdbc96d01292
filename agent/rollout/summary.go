package rollout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store"
)

// Summary is what `fleet rollout status` shows of a rollout.
type Summary struct {
	Rollout  string        `json:"rollout"`
	Document string        `json:"document"`
	Phase    string        `json:"phase"`
	Reason   string        `json:"reason,omitempty"`
	Wave     string        `json:"wave,omitempty"` // the current wave
	Waves    []WaveSummary `json:"waves"`
	Updated  time.Time     `json:"updated"`
}

// WaveSummary counts one wave's hosts by state.
type WaveSummary struct {
	Name string `json:"name"`
	// State is waiting, awaiting approval, trial, baking or done.
	State     string         `json:"state"`
	Hosts     int            `json:"hosts"`
	Counts    map[string]int `json:"counts,omitempty"` // by host state
	NotReady  int            `json:"notReady,omitempty"`
	Tolerance int            `json:"tolerance"`
	BakeLeft  string         `json:"bakeLeft,omitempty"`
	// Preflight sums the wave's pre-flight up ("planned 8/8, flagged 1,
	// no snapshot 2"); Findings are the flagged hosts (the first 100).
	Preflight string    `json:"preflight,omitempty"`
	Findings  []Finding `json:"findings,omitempty"`
	Excluded  []string  `json:"excluded,omitempty"`
}

// Summarize is s as status shows it at now.
func Summarize(s *State, now time.Time) Summary {
	out := Summary{Rollout: s.Spec.Rollout, Document: s.Spec.Document, Phase: s.Phase, Reason: s.Reason, Updated: s.Updated}
	if s.Wave < len(s.Spec.Waves) && !ended(s) {
		out.Wave = s.Spec.Waves[s.Wave].Name
	}
	for i, w := range s.Spec.Waves {
		ws := WaveSummary{Name: w.Name, State: "waiting"}
		if i < len(s.Waves) {
			ws = waveSummary(s, i, now)
		} else if i == s.Wave && w.ApprovalRequired && !s.Approvals[w.Name] {
			ws.State = "awaiting approval"
		}
		out.Waves = append(out.Waves, ws)
	}
	return out
}

func waveSummary(s *State, i int, now time.Time) WaveSummary {
	st := &s.Waves[i]
	ws := WaveSummary{Name: st.Name, Hosts: len(st.Hosts), Counts: map[string]int{}, Tolerance: tolerance(s, i) + st.Accepted}
	for _, h := range st.Hosts {
		hs := s.Hosts[h]
		switch {
		case hs == nil:
			ws.Counts["queued"]++
		default:
			ws.Counts[hs.State]++
			if hs.NotReady {
				ws.NotReady++
			}
		}
	}
	if st.Preflighted > 0 || st.Flagged > 0 {
		ws.Preflight = fmt.Sprintf("planned %d/%d", st.Preflighted, len(st.Hosts))
		for _, c := range []struct {
			what string
			n    int
		}{{"flagged", st.Flagged}, {"no snapshot", st.NoSnapshot}, {"unplannable", st.Unplannable}} {
			if c.n > 0 {
				ws.Preflight += fmt.Sprintf(", %s %d", c.what, c.n)
			}
		}
		if st.PreflightApproved {
			ws.Preflight += ", approved"
		}
		ws.Findings = st.Findings
	}
	ws.Excluded = st.Excluded
	switch {
	case st.Done:
		ws.State = "done"
	case i == s.Wave && (s.Phase == PhaseHalted || s.Phase == PhaseAborting || s.Phase == PhaseAborted):
		ws.State = s.Phase // the wave it stopped in
	case st.Flagged > 0 && !st.PreflightApproved:
		ws.State = "awaiting approval (pre-flight)"
	case st.BakeUntil.IsZero():
		ws.State = "trial"
	default:
		ws.State = "baking"
		ws.BakeLeft = max(st.BakeUntil.Sub(now), 0).Round(time.Second).String()
	}
	return ws
}

// summaryStates are the keys of WaveSummary.Counts, in the order shown.
var summaryStates = []string{"queued", HostPushing, HostPending, HostConfirmed, HostReverted, HostTimeout, HostConflict, HostSkipped, HostRolledBack}

// CountsText renders a wave's counts ("confirmed 3, pending 2").
func (w WaveSummary) CountsText() string {
	var parts []string
	for _, k := range summaryStates {
		if n := w.Counts[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	if w.NotReady > 0 {
		parts = append(parts, fmt.Sprintf("not-ready %d", w.NotReady))
	}
	return strings.Join(parts, ", ")
}

// List reads every rollout of the fleet, in id order.
func List(ctx context.Context, st store.Store, l fleet.Layout) ([]*State, error) {
	keys, _, err := st.ListKeys(ctx, l.Rollouts())
	if err != nil {
		return nil, fmt.Errorf("listing rollouts: %w", err)
	}
	var out []*State
	for _, k := range keys {
		id, ok := strings.CutSuffix(strings.TrimPrefix(k.Key, l.Rollouts()+"/"), "/state")
		if !ok || strings.Contains(id, "/") {
			continue
		}
		s, _, err := Load(ctx, st, l, id)
		if errors.Is(err, ErrNoRollout) {
			continue // removed meanwhile
		}
		if err != nil {
			return out, err
		}
		out = append(out, s)
	}
	return out, nil
}
