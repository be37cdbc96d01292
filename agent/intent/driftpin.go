package intent

import (
	"maps"
	"slices"
)

// WithDriftPinned returns the merged intent in (Merge's result) as one
// document that says by itself the drift policy each of its objects has
// from its file: the files' "drift" (DriftByFile) is not part of the
// JSON, and a version of the intent, stored as that JSON and rendered
// again (a rollback, the rollback a daemon finds in force at its start),
// would otherwise repair what a file said to report or ignore.
//
// When every file says the same, that is the document's "drift". When
// they differ, each interface, route, rule, neighbour and chain without a
// "drift" of its own gets its file's, and the document's "drift" is that
// of the files defining sysctls (which have no "drift" of their own) if
// they agree, else repair. The result shares what it does not change with
// in (objects are copied only when one of their section gets a policy);
// in is returned as it is when no file says other than repair.
func (in *Intent) WithDriftPinned() *Intent {
	if in.DriftByFile == nil || !in.UsesDrift() {
		return in
	}
	out := *in
	out.DriftByFile = nil
	if p, ok := same(slices.Collect(maps.Values(in.DriftByFile))); ok {
		out.Drift = pinned(p)
		return &out
	}
	var sysctlFiles []DriftPolicy
	for k := range in.Sysctls {
		sysctlFiles = append(sysctlFiles, in.SysctlDrift(k))
	}
	if p, ok := same(sysctlFiles); ok {
		out.Drift = pinned(p)
	} else {
		out.Drift = ""
	}
	base := out.Drift.Effective()
	pin := func(own *DriftPolicy, o Origin) {
		if *own == "" {
			if p := in.DriftOf("", o); p != base {
				*own = p
			}
		}
	}
	out.Interfaces = slices.Clone(in.Interfaces)
	for i := range out.Interfaces {
		pin(&out.Interfaces[i].Drift, out.Interfaces[i].Origin)
	}
	out.Routes = slices.Clone(in.Routes)
	for i := range out.Routes {
		pin(&out.Routes[i].Drift, out.Routes[i].Origin)
	}
	out.Rules = slices.Clone(in.Rules)
	for i := range out.Rules {
		pin(&out.Rules[i].Drift, out.Rules[i].Origin)
	}
	out.Neighbors = slices.Clone(in.Neighbors)
	for i := range out.Neighbors {
		pin(&out.Neighbors[i].Drift, out.Neighbors[i].Origin)
	}
	out.Firewall.Chains = slices.Clone(in.Firewall.Chains)
	for i := range out.Firewall.Chains {
		pin(&out.Firewall.Chains[i].Drift, out.Firewall.Chains[i].Origin)
	}
	return &out
}

// same returns the policy all of ps have (repair when unset), and whether
// they agree; an empty ps agrees on repair.
func same(ps []DriftPolicy) (DriftPolicy, bool) {
	p := DriftRepair
	for i, q := range ps {
		if i == 0 {
			p = q.Effective()
		} else if q.Effective() != p {
			return "", false
		}
	}
	return p, true
}

// pinned is p as a document's "drift": "" for repair, the default.
func pinned(p DriftPolicy) DriftPolicy {
	if p == DriftRepair {
		return ""
	}
	return p
}
