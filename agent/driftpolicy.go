package agent

import (
	"slices"
	"strings"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// The drift policy of the intent ("drift": repair, report, ignore;
// intent.DriftPolicy) is the daemon's: a difference its drift check finds
// in an item that someone else changed or deleted is repaired only if the
// item's policy says repair. A report item's difference is listed in
// status (Status.Drifted: the attribute, the intended and the running
// value) and counted in the metrics as found and not repaired; an ignore
// item's is neither. Either way the current state keeps what netagent
// wrote, so no reconcile touches the item: the reconciler stays unaware of
// policies. What is not drift is not filtered: an item the intent adds is
// created, one whose intended value changes is written, and a change of
// netagent's own that the kernel did not keep follows the Verifier's rule.
// A start of the daemon reads the kernel back and converges everything,
// like `netagent apply`: both are the operator's order to apply the
// intent (and after a reboot a NIC holds its driver's defaults, which
// nothing but configuring it tells apart from a change by hand).

// driftPolicies is the loop's record of the policies.
type driftPolicies struct {
	adopted  render.DriftPolicies // of the intended graph
	rendered render.DriftPolicies // of the graph rendered last (adopted with it)
	// reported are the report items the last drift check found drifted.
	reported map[dg.ItemRef]host.Drift
}

// driftRenderer wraps r so that each successful render records the drift
// policies of its files, for adoptDrift.
func (a *Agent) driftRenderer(r Renderer) Renderer {
	return func(files map[string]*intent.Intent) (*dg.Graph, error) {
		g, err := r(files)
		if err != nil || a.st == nil {
			return g, err
		}
		p, perr := render.DriftOf(files)
		if perr != nil {
			a.log.WithError(perr).Warn("drift policies: every item is repaired")
		}
		a.st.policy.rendered = p
		return g, nil
	}
}

// adoptDrift takes the policies of the graph rendered last, adopted now,
// and forgets the reported items whose policy or intended value changed.
func (a *Agent) adoptDrift(g *dg.Graph) {
	d := &a.st.policy
	d.adopted, d.rendered = d.rendered, nil
	for ref, f := range d.reported {
		want, ok := g.Get(ref)
		if !ok || d.adopted.Of(ref) != intent.DriftReport || f.Old == nil || !want.Equal(f.Old) {
			delete(d.reported, ref)
		}
	}
}

// leaveDrift reports whether a drift check's finding f is left alone by
// the policy of its item, recording it in reported if its policy is
// report. A change of netagent's own the kernel did not keep (f.Unkept)
// and an item netagent owns but no longer intends are not drift to leave.
func (a *Agent) leaveDrift(f host.Finding, reported map[dg.ItemRef]host.Drift) (leave, report bool) {
	if f.Unkept != nil || f.Old == nil || !a.st.intended.Contains(f.Ref) {
		return false, false
	}
	switch a.st.policy.adopted.Of(f.Ref) {
	case intent.DriftReport:
		reported[f.Ref] = f.Drift
		return true, true
	case intent.DriftIgnore:
		return true, false
	}
	return false, false
}

// newlyReported reports whether the last drift check did not report d
// already: a report item's difference is logged and counted once, not at
// every check that finds it again.
func (a *Agent) newlyReported(d host.Drift) bool {
	prev, was := a.st.policy.reported[d.Ref]
	if !was || (prev.New == nil) != (d.New == nil) {
		return true
	}
	return d.New != nil && !d.New.Equal(prev.New)
}

// driftStatuses lists the reported items, sorted.
func (a *Agent) driftStatuses() []DriftStatus {
	var out []DriftStatus
	for ref, f := range a.st.policy.reported {
		ds := DriftStatus{Item: ref.String(), File: fileOf(a.st.intended, ref), What: f.What()}
		want, ok := a.st.intended.Get(ref)
		if !ok {
			want = f.Old
		}
		if f.New != nil {
			for _, fd := range host.DiffFields(want, f.New) {
				ds.Fields = append(ds.Fields, DriftField{Field: fd.Field, Intended: fd.Want, Running: fd.Have})
			}
		}
		out = append(out, ds)
	}
	slices.SortFunc(out, func(x, y DriftStatus) int { return strings.Compare(x.Item, y.Item) })
	return out
}

// checkDiffers lists, for CmdCheck, the items of rep (the read-back
// compared with intended) whose attributes differ, and the ignore items
// among them by the policies pol, which it leaves out: their policy says
// not to hear of them.
func checkDiffers(rep *host.Report, intended *dg.Graph, pol render.DriftPolicies) (out []DriftStatus, ignored map[dg.ItemRef]bool) {
	for _, d := range rep.Diffs {
		if d.Kind != host.Differs {
			continue
		}
		p := pol.Of(d.Ref)
		if host.IgnoredDrift(d, pol) {
			if ignored == nil {
				ignored = map[dg.ItemRef]bool{}
			}
			ignored[d.Ref] = true
			continue
		}
		ds := DriftStatus{Item: d.Ref.String(), File: fileOf(intended, d.Ref), What: "changed"}
		if p != intent.DriftRepair {
			ds.Policy = p
		}
		for _, f := range d.Fields {
			ds.Fields = append(ds.Fields, DriftField{Field: f.Field, Intended: f.Want, Running: f.Have})
		}
		out = append(out, ds)
	}
	return out, ignored
}

// withoutOps returns log without the operations on the items of skip.
func withoutOps(log reconciler.OperationLog, skip map[dg.ItemRef]bool) reconciler.OperationLog {
	if len(skip) == 0 {
		return log
	}
	out := make(reconciler.OperationLog, 0, len(log))
	for _, e := range log {
		if !skip[e.Ref] {
			out = append(out, e)
		}
	}
	return out
}
