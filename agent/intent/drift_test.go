package intent

import (
	"strings"
	"testing"
)

// TestDriftBadValues: a "drift" that is not a policy is refused with its
// JSON path, at the top and on each kind of object.
func TestDriftBadValues(t *testing.T) {
	in, err := Parse([]byte(`{"version":1,"drift":"fix",
		"interfaces":[{"name":"br0","type":"bridge","drift":"Report"}],
		"routes":[{"to":"10.1.0.0/16","dev":"br0","drift":"never"}],
		"rules":[{"priority":100,"table":10,"drift":"x"}],
		"neighbors":[{"dev":"br0","ip":"192.0.2.9","mac":"02:00:00:00:00:09","drift":"y"}],
		"firewall":{"chains":[{"table":"filter","name":"C","drift":"z"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	err = in.Validate()
	if err == nil {
		t.Fatal("Validate accepted bad drift policies")
	}
	for _, path := range []string{"drift", "interfaces[0].drift", "routes[0].drift", "rules[0].drift",
		"neighbors[0].drift", "firewall.chains[0].drift"} {
		found := false
		for _, fe := range FieldErrors(err) {
			if fe.Path == path && strings.Contains(fe.Msg, "is not one of repair, report, ignore") {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem at %s in %v", path, err)
		}
	}
}

// TestDriftOf: an object's own policy wins over its file's; an object
// takes its own file's policy, not another file's; the default is repair.
func TestDriftOf(t *testing.T) {
	a, err := Parse([]byte(`{"version":1,"drift":"report","routes":[
		{"to":"10.1.0.0/16","dev":"lo"},{"to":"10.2.0.0/16","dev":"lo","drift":"ignore"}],
		"sysctls":{"net.ipv4.ip_forward":"1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse([]byte(`{"version":1,"routes":[{"to":"10.3.0.0/16","dev":"lo"},{"to":"10.4.0.0/16","dev":"lo","drift":"report"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(map[string]*Intent{"a.json": a, "b.json": b})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]DriftPolicy{"10.1.0.0/16": DriftReport, "10.2.0.0/16": DriftIgnore,
		"10.3.0.0/16": DriftRepair, "10.4.0.0/16": DriftReport}
	for _, r := range m.Routes {
		if got := m.DriftOf(r.Drift, r.Origin); got != want[r.To] {
			t.Errorf("route %s: policy %q, want %q", r.To, got, want[r.To])
		}
	}
	if got := m.SysctlDrift("net.ipv4.ip_forward"); got != DriftReport {
		t.Errorf("sysctl of a.json: %q, want report", got)
	}
	if !m.UsesDrift() {
		t.Error("UsesDrift: false")
	}
	// One file, not merged: its own top-level policy.
	if got := a.DriftOf("", Origin{}); got != DriftReport {
		t.Errorf("unmerged: %q, want report", got)
	}
	plain, _ := Parse([]byte(`{"version":1}`))
	if plain.UsesDrift() || plain.DriftOf("", Origin{}) != DriftRepair {
		t.Error("an intent without drift: not all repair")
	}
}

// TestDriftBadFileValueMerged: a file's "drift" that is not a policy is
// refused also after Merge (which moves it into DriftByFile), naming the
// file and the path, as the daemon and apply validate merged files.
func TestDriftBadFileValueMerged(t *testing.T) {
	bad, err := Parse([]byte(`{"version":1,"drift":"ignroe","interfaces":[{"name":"br0","type":"bridge"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	good, err := Parse([]byte(`{"version":1,"drift":"report","interfaces":[{"name":"br1","type":"bridge"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	merged, err := Merge(map[string]*Intent{"a.json": bad, "b.json": good})
	if err != nil {
		t.Fatal(err)
	}
	err = merged.Validate()
	fes := FieldErrors(err)
	if len(fes) != 1 || fes[0].File != "a.json" || fes[0].Path != "drift" || !strings.Contains(fes[0].Msg, `"ignroe" is not one of repair, report, ignore`) {
		t.Fatalf("Validate of the merged files: %v, want one problem at a.json drift", err)
	}
}
