package status

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Build builds the Status of in at now, its conditions stamped by memo;
// it returns the memo to keep for the next build.
func Build(in *Snapshot, memo Memo, now time.Time) (Status, Memo) {
	out := Status{
		Reconciles:     in.Runs,
		LastReconcile:  in.LastReconcile,
		LastReasons:    in.LastReasons,
		NextRetry:      in.NextRetry,
		NextDriftCheck: in.NextDriftCheck,
		Errors:         append(in.Notes.List(), cycleErrors(in.LastErr)...),
		Items:          itemStatuses(in),
		Links:          linkStatuses(in.Current),
		Version:        in.Version,
		Digest:         in.Digest,
		Trial:          trialCopy(in.Trial),
		LastTrial:      outcomeCopy(in.LastTrial),
		Drifted:        DriftStatuses(in.Reported, in.Intended),
		Leases:         in.Leases,
	}
	if v := in.OverrideVersion; v != 0 {
		out.Override = fmt.Sprintf("rollback to version %d: the intent documents are set aside until one changes", v)
	}
	t := Tallies{}
	for _, is := range out.Items {
		t.Add(is.File, is.Ref, is.State, cmp.Or(is.BlockedOn, is.LastError))
	}
	out.Files, memo = fileStatuses(in, t, memo, now)
	out.Ready = in.Runs > 0 && len(out.Errors) == 0 && allReady(out.Files) && noneFailed(out.Items) && len(in.Refusals) == 0
	ready, degraded := AgentConditions(in, memo)
	out.Conditions = []Condition{memo.stamp(memo, "", ready, now), memo.stamp(memo, "", degraded, now)}
	return out, memo
}

func trialCopy(t *TrialStatus) *TrialStatus {
	if t == nil {
		return nil
	}
	ts := *t
	ts.Probes = append([]string(nil), ts.Probes...)
	ts.FailingBefore = append([]string(nil), ts.FailingBefore...)
	return &ts
}

func outcomeCopy(o *TrialOutcome) *TrialOutcome {
	if o == nil {
		return nil
	}
	oc := *o
	oc.FailingBefore = append([]string(nil), oc.FailingBefore...)
	return &oc
}

// cycleErrors lists the errors of the last run that no failed item
// explains: dependency cycles.
func cycleErrors(err error) []string {
	var out []string
	for _, e := range unjoin(err) {
		if errors.Is(e, reconciler.ErrCycle) {
			out = append(out, e.Error())
		}
	}
	return out
}

func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func allReady(files []FileStatus) bool {
	for _, f := range files {
		if !f.Conditions[3].Status {
			return false
		}
	}
	return true
}

func noneFailed(items []ItemStatus) bool {
	for _, it := range items {
		if it.State == dg.StateFailed.String() || it.State == StateNotConverging {
			return false
		}
	}
	return true
}

func linkStatuses(g *dg.Graph) []LinkStatus {
	var out []LinkStatus
	for _, ref := range g.Refs() {
		if ref.Type != items.TypeLink {
			continue
		}
		it, _ := g.Get(ref)
		if l, ok := it.(*items.Link); ok {
			out = append(out, LinkStatus{Name: l.IfName, Carrier: l.Carrier, OperUp: l.OperUp, AdminUp: l.AdminUp})
		}
	}
	return out
}
