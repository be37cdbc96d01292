//go:build !vmtest

package netns_test

import (
	"slices"
	"strings"
	"testing"
)

// TestAgentCLIOwnershipCannotBeForged tries every way an intent could
// claim an object netagent did not create: a link alias carrying the mark
// (on a NIC, on the uplink), a virtual interface, an address, a route, a
// rule, a neighbour and a chain that someone else's object already holds,
// a rule carrying the chain mark's comment, and a protocol field (no
// intent field sets protocol 211, the mark of routes, rules, addresses and
// neighbours: the parser refuses it). Each fails (exit 1) naming the
// object or the JSON path; the foreign objects are untouched throughout,
// and still there after an empty intent is applied.
func TestAgentCLIOwnershipCannotBeForged(t *testing.T) {
	e := cliNewEnv(t)
	e.ip("link", "add", "victim0", "type", "veth", "peer", "name", "victim0p")
	e.ip("link", "add", "fbr0", "type", "bridge")
	e.ip("link", "set", "fbr0", "up")
	e.ip("addr", "add", "10.97.0.1/24", "dev", "fbr0")
	e.ip("route", "add", "10.99.0.0/16", "via", "10.97.0.254", "proto", "static")
	e.ip("rule", "add", "priority", "500", "from", "10.98.0.0/16", "lookup", "50", "proto", "static")
	e.ip("neigh", "add", "10.97.0.20", "lladdr", "02:00:00:00:00:21", "dev", "fbr0", "nud", "permanent")
	e.exec("iptables", "-N", "FOREIGN")
	e.exec("iptables", "-A", "FOREIGN", "-s", "10.98.0.0/16", "-j", "RETURN")
	e.exec("iptables", "-I", "INPUT", "-j", "FOREIGN")
	view := func() string {
		var b strings.Builder
		for _, l := range []string{"victim0", "victim0p", "uplink0", "uplink0-peer", "fbr0"} {
			b.WriteString(e.ip("link", "show", l))
		}
		b.WriteString(e.ip("addr", "show", "dev", "fbr0") + e.ip("route", "show", "10.99.0.0/16") +
			e.ip("rule", "show", "priority", "500") + e.ip("neigh", "show", "dev", "fbr0", "nud", "permanent") +
			e.exec("iptables", "-S", "FOREIGN") + e.exec("iptables", "-S", "INPUT"))
		return b.String()
	}
	before := view()

	fbr0 := `{"name": "fbr0", "type": "physical"}`
	cases := []struct {
		name, doc string
		want      []string // each must be in the output
	}{
		{"alias on a NIC", `"interfaces": [{"name": "victim0", "type": "physical", "alias": "netagent"}]`,
			[]string{"interfaces[0].alias", `"netagent" is reserved`}},
		{"alias on the uplink", `"interfaces": [{"name": "uplink0", "type": "physical", "alias": "netagent:wan"}]`,
			[]string{"interfaces[0].alias", `"netagent:wan" is reserved`}},
		{"virtual interface", `"interfaces": [{"name": "fbr0", "type": "bridge"}]`,
			[]string{"interface/fbr0", "not owned by netagent"}},
		{"veth", `"interfaces": [{"name": "victim0", "type": "veth", "veth": {"peer": "victim0p"}}]`,
			[]string{"interface/victim0", "not owned by netagent"}},
		{"address", `"interfaces": [{"name": "fbr0", "type": "physical", "addresses": ["10.97.0.1/24"]}]`,
			[]string{"address/", "10.97.0.1", "not owned by netagent"}},
		{"route", `"interfaces": [` + fbr0 + `], "routes": [{"to": "10.99.0.0/16", "via": "10.97.0.254", "dev": "fbr0"}]`,
			[]string{"route/", "10.99.0.0/16", "not owned by netagent"}},
		{"rule", `"rules": [{"priority": 500, "from": "10.98.0.0/16", "table": 50}]`,
			[]string{"rule/", "500", "not owned by netagent"}},
		{"neighbour", `"interfaces": [` + fbr0 + `], "neighbors": [{"dev": "fbr0", "ip": "10.97.0.20", "mac": "02:00:00:00:00:20"}]`,
			[]string{"neighbor/", "10.97.0.20", "not owned by netagent"}},
		{"chain", `"firewall": {"chains": [{"table": "filter", "name": "FOREIGN", "rules": ["-j ACCEPT"]}]}`,
			[]string{"iptables-chain/ipv4/filter/FOREIGN", "not owned by netagent"}},
		{"chain mark in a rule", `"firewall": {"chains": [{"table": "filter", "name": "MINE", "rules": ["-m comment --comment netagent -j FOREIGN"]}]}`,
			[]string{"firewall.chains[0].rules[0]", `"netagent" is reserved`}},
		{"route protocol", `"routes": [{"to": "10.99.0.0/16", "via": "10.97.0.254", "protocol": 211}]`,
			[]string{`routes[0]: unknown field "protocol"`}},
		{"rule protocol", `"rules": [{"priority": 500, "from": "10.98.0.0/16", "table": 50, "proto": "static"}]`,
			[]string{`rules[0]: unknown field "proto"`}},
	}
	for _, tc := range cases {
		file := e.writeFile("claim.json", `{"version": 1, `+tc.doc+`}`)
		res := e.netagent("apply", file)
		out := res.stdout + res.stderr
		if res.code != 1 {
			t.Errorf("%s: want exit 1, got %s", tc.name, res)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q: %s", tc.name, w, res)
			}
		}
		if after := view(); after != before {
			t.Fatalf("%s: foreign objects changed:\nbefore:\n%s\nafter:\n%s", tc.name, before, after)
		}
	}
	e.mustRun(0, "apply", e.writeFile("empty.json", `{"version": 1}`))
	if after := view(); after != before {
		t.Errorf("after the empty intent, foreign objects changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestAgentCLIPhysicalRestored: a NIC's settings that an apply changed
// (MTU 1400, an alias) come back, as found, when the NIC leaves the intent;
// every run is a new process, so the originals come from the state
// directory alone. Plan says so first; afterwards nothing is left to do.
func TestAgentCLIPhysicalRestored(t *testing.T) {
	e := cliNewEnv(t)
	found := e.link("uplink0")
	with := e.writeFile("with.json", `{"version": 1, "interfaces": [
		{"name": "uplink0", "type": "physical", "mtu": 1400, "alias": "wan", "addresses": ["192.0.2.10/24"]},
		{"name": "br-lan", "type": "bridge"}]}`)
	without := e.writeFile("without.json", `{"version": 1, "interfaces": [{"name": "br-lan", "type": "bridge"}]}`)

	e.mustRun(0, "apply", with)
	if l := e.link("uplink0"); l["mtu"] != 1400.0 || l["ifalias"] != "wan" {
		t.Fatalf("uplink0 after apply: mtu %v alias %v", l["mtu"], l["ifalias"])
	}
	if res := e.mustRun(0, "apply", with); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply: %s", res)
	}
	if ops := e.planOps(without); !slices.Contains(ops, "delete interface/uplink0") {
		t.Errorf("plan without uplink0: %v, want the delete that restores it", ops)
	}
	e.mustRun(0, "apply", without)
	l := e.link("uplink0")
	if l["mtu"] != found["mtu"] || l["ifalias"] != found["ifalias"] || l["operstate"] != found["operstate"] {
		t.Errorf("uplink0 after it left the intent: mtu %v alias %v state %v, want as found: %v %v %v",
			l["mtu"], l["ifalias"], l["operstate"], found["mtu"], found["ifalias"], found["operstate"])
	}
	if res := e.mustRun(0, "apply", without); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("apply after the restore: %s", res)
	}
}
