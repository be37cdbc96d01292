package intent

import (
	"encoding/json"
	"testing"
)

// WithDriftPinned: the merged intent, marshalled and parsed again as one
// document, gives every object the policy its file gave it.
func TestWithDriftPinned(t *testing.T) {
	parse := func(s string) *Intent {
		in, err := Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	files := map[string]*Intent{
		"a.json": parse(`{"version": 1, "drift": "report",
			"interfaces": [{"name": "eth0", "type": "physical"}, {"name": "eth1", "type": "physical", "drift": "ignore"}],
			"sysctls": {"net.ipv4.ip_forward": "1"}}`),
		"b.json": parse(`{"version": 1,
			"routes": [{"to": "10.0.0.0/8", "via": "192.0.2.1", "dev": "eth0"}],
			"firewall": {"chains": [{"family": "ipv4", "table": "filter", "name": "X", "rules": []}]}}`),
		"c.json": parse(`{"version": 1, "drift": "ignore",
			"neighbors": [{"dev": "eth0", "ip": "192.0.2.9", "mac": "02:00:00:00:00:09"}],
			"rules": [{"priority": 100, "from": "10.0.0.0/8", "table": 100}]}`),
	}
	merged, err := Merge(files)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(merged.WithDriftPinned())
	if err != nil {
		t.Fatal(err)
	}
	one := parse(string(data))
	want := map[string]DriftPolicy{"eth0": DriftReport, "eth1": DriftIgnore, "route": DriftRepair,
		"chain": DriftRepair, "neighbor": DriftIgnore, "rule": DriftIgnore, "sysctl": DriftReport}
	got := map[string]DriftPolicy{
		"eth0":     one.DriftOf(one.Interfaces[0].Drift, Origin{}),
		"eth1":     one.DriftOf(one.Interfaces[1].Drift, Origin{}),
		"route":    one.DriftOf(one.Routes[0].Drift, Origin{}),
		"chain":    one.DriftOf(one.Firewall.Chains[0].Drift, Origin{}),
		"neighbor": one.DriftOf(one.Neighbors[0].Drift, Origin{}),
		"rule":     one.DriftOf(one.Rules[0].Drift, Origin{}),
		"sysctl":   one.SysctlDrift("net.ipv4.ip_forward"),
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q\n%s", k, got[k], w, data)
		}
	}
	// One file, or files that agree: the document's own "drift".
	m1, _ := Merge(map[string]*Intent{"a.json": files["a.json"]})
	if p := m1.WithDriftPinned(); p.Drift != DriftReport || p.Interfaces[0].Drift != "" {
		t.Errorf("one file: drift %q, eth0's %q", p.Drift, p.Interfaces[0].Drift)
	}
	// No file says other than repair: in itself.
	m2, _ := Merge(map[string]*Intent{"b.json": files["b.json"]})
	if m2.WithDriftPinned() != m2 {
		t.Error("an intent without drift was copied")
	}
}
