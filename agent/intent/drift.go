package intent

import (
	"maps"
	"slices"
)

// DriftPolicy says what netagent does when the kernel's copy of an object
// drifts from the intent after the object was created (someone changed or
// deleted it by hand). It is set with "drift" at the top of an intent file
// (the default of the file's objects) and on any object of a list section
// (an interface with its addresses, port and VLANs; a route, rule,
// neighbour or chain); a sysctl takes its file's. An object's own value
// wins over its file's; an object takes the policy of the file that
// defines it, never another file's. "" means DriftRepair.
type DriftPolicy string

// The drift policies.
const (
	// DriftRepair: the daemon puts the object back as soon as its drift
	// check finds it changed or gone (the default).
	DriftRepair DriftPolicy = "repair"
	// DriftReport: the daemon leaves a drifted object as it is, and lists
	// it (attribute, intended and running value) in `netagent status` and
	// `netagent check`, and counts it in the metrics as drift found and
	// not repaired.
	DriftReport DriftPolicy = "report"
	// DriftIgnore: the daemon leaves a drifted object as it is and says
	// nothing of it; `netagent check` does not count it.
	DriftIgnore DriftPolicy = "ignore"
)

var driftPolicies = []DriftPolicy{DriftRepair, DriftReport, DriftIgnore}

// Effective returns p, or DriftRepair when p is unset.
func (p DriftPolicy) Effective() DriftPolicy {
	if p == "" {
		return DriftRepair
	}
	return p
}

// DriftOf returns the effective policy of an object whose own "drift" is
// own and whose Origin is o: own, else the "drift" of the file that
// defines it, else DriftRepair.
func (in *Intent) DriftOf(own DriftPolicy, o Origin) DriftPolicy {
	if own != "" {
		return own
	}
	if in.DriftByFile != nil {
		if p, ok := in.DriftByFile[in.FileOf(o)]; ok {
			return p
		}
		return DriftRepair
	}
	return in.Drift.Effective()
}

// SysctlDrift returns the effective policy of the sysctl key: its file's.
func (in *Intent) SysctlDrift(key string) DriftPolicy {
	return in.DriftOf("", in.SysctlOrigins[key])
}

// UsesDrift reports whether any object of in may have a policy other than
// DriftRepair: whether the intent says "drift" anywhere but "repair".
func (in *Intent) UsesDrift() bool {
	if in.Drift.Effective() != DriftRepair {
		return true
	}
	for _, p := range in.DriftByFile {
		if p != DriftRepair {
			return true
		}
	}
	for i := range in.Interfaces {
		if in.Interfaces[i].Drift.Effective() != DriftRepair {
			return true
		}
	}
	for i := range in.Routes {
		if in.Routes[i].Drift.Effective() != DriftRepair {
			return true
		}
	}
	for i := range in.Rules {
		if in.Rules[i].Drift.Effective() != DriftRepair {
			return true
		}
	}
	for i := range in.Neighbors {
		if in.Neighbors[i].Drift.Effective() != DriftRepair {
			return true
		}
	}
	for i := range in.Firewall.Chains {
		if in.Firewall.Chains[i].Drift.Effective() != DriftRepair {
			return true
		}
	}
	return false
}

// drift checks every "drift" of the intent: a merged intent's file-level
// ones (DriftByFile, each at its file's "drift"), else its own.
func (c *checker) drift() {
	oneOf(c, Origin{Path: "drift"}, c.in.Drift, driftPolicies)
	for _, file := range slices.Sorted(maps.Keys(c.in.DriftByFile)) {
		oneOf(c, Origin{File: file, Path: "drift"}, c.in.DriftByFile[file], driftPolicies)
	}
	for i := range c.in.Interfaces {
		if p := c.in.Interfaces[i].Drift; p != "" {
			oneOf(c, c.in.Locate(c.in.Interfaces[i].Origin, "interfaces", i).field("drift"), p, driftPolicies)
		}
	}
	for i := range c.in.Routes {
		if p := c.in.Routes[i].Drift; p != "" {
			oneOf(c, c.in.Locate(c.in.Routes[i].Origin, "routes", i).field("drift"), p, driftPolicies)
		}
	}
	for i := range c.in.Rules {
		if p := c.in.Rules[i].Drift; p != "" {
			oneOf(c, c.in.Locate(c.in.Rules[i].Origin, "rules", i).field("drift"), p, driftPolicies)
		}
	}
	for i := range c.in.Neighbors {
		if p := c.in.Neighbors[i].Drift; p != "" {
			oneOf(c, c.in.Locate(c.in.Neighbors[i].Origin, "neighbors", i).field("drift"), p, driftPolicies)
		}
	}
	for i := range c.in.Firewall.Chains {
		if p := c.in.Firewall.Chains[i].Drift; p != "" {
			oneOf(c, c.in.Locate(c.in.Firewall.Chains[i].Origin, "firewall.chains", i).field("drift"), p, driftPolicies)
		}
	}
}
