package agent

import (
	"slices"
	"strings"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/target"
	dg "github.com/netagent/netagent/depgraph"
)

// The states of an item in a check that lists every item (`check --all`,
// `check --json`, with or without the daemon).
const (
	CheckOK      = "ok"
	CheckDiffers = "differs"
	CheckMissing = "missing"
	CheckExtra   = "extra"   // netagent's, in the kernel, no longer intended: apply deletes it
	CheckForeign = "foreign" // carries netagent's mark, no item describes it: left alone
	CheckIgnored = "ignored" // differs, but its drift policy is ignore
)

// CheckItem is one item of a check: its state, and for differs each
// attribute with the intended and the running value. Its JSON is that of
// an item of `check --json` (format 1).
type CheckItem struct {
	Item   string       `json:"item"`
	State  string       `json:"state"`
	Drift  string       `json:"drift,omitempty"` // the item's drift policy, unless repair
	Fields []DriftField `json:"fields,omitempty"`
	// HeldBy, for missing, are the objects netagent does not own in its
	// place.
	HeldBy []string `json:"heldBy,omitempty"`
}

// CheckItems lists every intended item, those apply would delete and the
// foreign objects of rep, each with its state, sorted by item.
func CheckItems(intended *dg.Graph, rep *target.Report, policies render.DriftPolicies) []CheckItem {
	byRef := map[dg.ItemRef]target.Difference{}
	for _, d := range rep.Diffs {
		byRef[d.Ref] = d
	}
	var out []CheckItem
	add := func(ref dg.ItemRef, d target.Difference, found bool) {
		ci := CheckItem{Item: ref.String(), State: CheckOK}
		if p := policies.Of(ref); p != "" && p != intent.DriftRepair {
			ci.Drift = string(p)
		}
		if found {
			ci.State = string(d.Kind)
			for _, f := range d.Fields {
				ci.Fields = append(ci.Fields, DriftField{Field: f.Field, Intended: f.Want, Running: f.Have})
			}
			for _, h := range d.HeldBy {
				ci.HeldBy = append(ci.HeldBy, h.String())
			}
			if d.Kind == target.Differs && ci.Drift == string(intent.DriftIgnore) {
				ci.State = CheckIgnored
			}
		}
		out = append(out, ci)
	}
	for _, ref := range intended.Refs() {
		d, found := byRef[ref]
		add(ref, d, found)
		delete(byRef, ref)
	}
	for ref, d := range byRef { // extra
		add(ref, d, true)
	}
	for _, f := range rep.Foreign {
		out = append(out, CheckItem{Item: dg.Ref(f).String(), State: CheckForeign})
	}
	slices.SortFunc(out, func(a, b CheckItem) int { return strings.Compare(a.Item, b.Item) })
	return out
}
