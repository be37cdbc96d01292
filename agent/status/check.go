package status

import (
	"slices"
	"strings"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// CheckItems lists every intended item, those apply would delete and the
// foreign objects of rep, each with its state, sorted by item.
func CheckItems(intended *dg.Graph, rep *host.Report, policies render.DriftPolicies) []CheckItem {
	byRef := map[dg.ItemRef]host.Difference{}
	for _, d := range rep.Diffs {
		byRef[d.Ref] = d
	}
	var out []CheckItem
	add := func(ref dg.ItemRef, d host.Difference, found bool) {
		ci := CheckItem{Item: ref.String(), State: CheckOK}
		if p := policies.Of(ref); p != "" && p != intent.DriftRepair {
			ci.Drift = string(p)
		}
		if found {
			ci.State = string(d.Kind)
			ci.Fields = driftFields(d.Fields)
			for _, h := range d.HeldBy {
				ci.HeldBy = append(ci.HeldBy, h.String())
			}
			if d.Kind == host.Missing && d.Want != nil {
				ci.Want = d.Want.String()
			}
			if d.Kind == host.Extra && d.Have != nil {
				ci.Have = d.Have.String()
			}
			if host.IgnoredDrift(d, policies) {
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

// LeaseRefusals lists the refusals of the lease items of refused (item →
// why), DHCPv4 first, by interface.
func LeaseRefusals(refused map[dg.ItemRef]string) []LeaseRefusal {
	var out []LeaseRefusal
	for ref, why := range refused {
		family := "ipv4"
		switch ref.Type {
		case items.TypeDHCP4Lease:
		case items.TypeDHCP6Lease:
			family = "ipv6"
		default:
			continue
		}
		out = append(out, LeaseRefusal{Interface: ref.Name, Family: family, Refused: why})
	}
	slices.SortFunc(out, func(a, b LeaseRefusal) int {
		return strings.Compare(a.Family+" "+a.Interface, b.Family+" "+b.Interface)
	})
	return out
}

// RefusalsOf takes from g, a graph just rendered, why each of its lease
// items is refused in part or whole (render.LeaseRefused).
func RefusalsOf(g *dg.Graph) map[dg.ItemRef]string {
	out := map[dg.ItemRef]string{}
	if g == nil {
		return out
	}
	for it := range g.Items() {
		if t := it.Type(); t == items.TypeDHCP4Lease || t == items.TypeDHCP6Lease {
			if why := render.LeaseRefused(g, dg.Ref(it)); why != "" {
				out[dg.Ref(it)] = why
			}
		}
	}
	return out
}

// Differing lists, for a check, the items of rep (the read-back
// compared with intended) whose attributes differ, and the ignore items
// among them by the policies pol, which it leaves out: their policy says
// not to hear of them.
func Differing(rep *host.Report, intended *dg.Graph, pol render.DriftPolicies) (out []DriftStatus, ignored map[dg.ItemRef]bool) {
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
		ds := DriftStatus{Item: d.Ref.String(), File: FileOf(intended, d.Ref), What: "changed", Fields: driftFields(d.Fields)}
		if p != intent.DriftRepair {
			ds.Policy = p
		}
		out = append(out, ds)
	}
	return out, ignored
}

// WithoutOps returns log without the operations on the items of skip.
func WithoutOps(log reconciler.OperationLog, skip map[dg.ItemRef]bool) reconciler.OperationLog {
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
