package oneshot

import (
	"context"
	"fmt"
	"strings"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/status"
	dg "github.com/netagent/netagent/depgraph"
)

// Checked is the outcome of Check.
type Checked struct {
	// Report is the comparison, its differences without those the
	// drift-ignore rule leaves out (host.IgnoredDrift).
	Report *host.Report
	// Ignored are the items whose differences the rule left out.
	Ignored []dg.ItemRef
	// Guarded is what the protection decided (its orphans are kept on
	// purpose: not a difference).
	Guarded *Guarded
	// Refused are the leases the intent refused in part or whole: a
	// lease's address or routes that would take over the intent's own
	// networks are not in the kernel, so the host is not as the intent
	// asks, even when the kernel matches what was rendered.
	Refused []status.LeaseRefusal
	// Intended is the intent as rendered.
	Intended *dg.Graph
	// Drift are the items' drift policies other than repair.
	Drift render.DriftPolicies
	// Items lists every item with its state (with all: check --all,
	// --json).
	Items []status.CheckItem
}

// Outcome is Converged when nothing differs and no lease was refused.
func (c *Checked) Outcome() Outcome {
	if c.Report.Converged() && len(c.Refused) == 0 {
		return Converged
	}
	return NotConverged
}

// Check is `netagent check`: it compares the kernel with the intent files
// at paths, attribute by attribute, the DHCP leases kept held as
// confirmed (no server is asked); all lists every item (Checked.Items).
// It changes nothing.
func Check(ctx context.Context, o *Options, paths []string, all bool) (*Checked, error) {
	t, err := Start(ctx, o, paths)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	t.Leases.TrustKept(t.Runtime)
	gd, err := t.Guard(ctx)
	if err != nil {
		return nil, err
	}
	rep, err := t.Runtime.Check(gd.Apply)
	if err != nil {
		return nil, &StepError{Step: "check", Err: err}
	}
	c := &Checked{Guarded: gd, Refused: t.Leases.Refusals(), Intended: t.Graph, Drift: t.Intent.Drift}
	if all {
		c.Items = status.CheckItems(t.Graph, rep, t.Intent.Drift)
	}
	kept, ignored := host.WithoutIgnored(rep.Diffs, t.Intent.Drift)
	c.Report, c.Ignored = &host.Report{Diffs: kept, Foreign: rep.Foreign}, ignored
	return c, nil
}

// CheckCounts counts the items of list (check --all, --json, the one-shot
// check's or the daemon's) by state, and reports whether they converged:
// none differs, is missing or extra, and no lease was refused.
func CheckCounts(list []status.CheckItem, refused []status.LeaseRefusal) (map[string]int, bool) {
	counts := map[string]int{}
	converged := len(refused) == 0
	for _, ci := range list {
		counts[ci.State]++
		switch ci.State {
		case status.CheckDiffers, status.CheckMissing, status.CheckExtra:
			converged = false
		}
	}
	return counts, converged
}

// CheckItemText is check's text of an item that differs, is missing or
// is extra (host.DiffText: the one-shot check's lines), marked when its
// drift policy is report; "" for an item in another state.
func CheckItemText(ci status.CheckItem) string {
	switch ci.State {
	case status.CheckDiffers, status.CheckMissing, status.CheckExtra:
	default:
		return ""
	}
	fields := make([]host.FieldDiff, len(ci.Fields))
	for i, f := range ci.Fields {
		fields[i] = host.FieldDiff{Field: f.Field, Want: f.Intended, Have: f.Running}
	}
	text := host.DiffText(ci.Item, host.DiffKind(ci.State), ci.Want, ci.Have, fields, ci.HeldBy)
	if ci.Drift == string(intent.DriftReport) {
		text += " (drift: report)"
	}
	return text
}

// CheckDetail is the detail of an item in check --all: the fields that
// differ, who holds it, its drift policy.
func CheckDetail(ci status.CheckItem) string {
	var detail []string
	for _, f := range ci.Fields {
		detail = append(detail, fmt.Sprintf("%s: intended %s, running %s", f.Field, f.Intended, f.Running))
	}
	for _, h := range ci.HeldBy {
		detail = append(detail, "held by "+h)
	}
	if ci.Drift != "" {
		detail = append(detail, "drift: "+ci.Drift)
	}
	return strings.Join(detail, "; ")
}

// CheckTally is check --all's count of the items by state ("3 ok, 1
// differs").
func CheckTally(counts map[string]int) string {
	var parts []string
	for _, s := range []string{status.CheckOK, status.CheckDiffers, status.CheckMissing, status.CheckExtra, status.CheckIgnored, status.CheckForeign} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	return strings.Join(parts, ", ")
}
