//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// nicMAC is the address of ens5, the veth end that plays the matched NIC.
const nicMAC = "02:00:00:00:05:01"

// cliMatchEnv is cliNewEnv with a second NIC, ens5 (a veth end with a
// fixed MAC; its peer ens5-peer), up.
func cliMatchEnv(t *testing.T) *cliEnv {
	e := cliNewEnv(t)
	e.ip("link", "add", "ens5", "address", nicMAC, "type", "veth", "peer", "name", "ens5-peer")
	e.ip("link", "set", "ens5", "up")
	e.ip("link", "set", "ens5-peer", "up")
	return e
}

// matchIntent is an intent whose physical interface name, found by the
// match (JSON), has an address.
func (e *cliEnv) matchIntent(file, name, match string) string {
	return e.writeFile(file, `{"version": 1, "interfaces": [{"name": "`+name+`", "type": "physical",
		"match": `+match+`, "addresses": ["192.0.2.10/24"]}]}`)
}

// A NIC matched by mac, driver and name glob is renamed to the intent's
// name: ip -d -j link shows lan0 with ens5's ifindex and MAC, up, with the
// address; plan predicted the rename as a flap; a second apply runs no
// operation; show --json prints the match, and applying its output runs
// no operation; someone renaming it back is drift that check reports and
// apply repairs; leaving the intent gives ens5 its name back.
func TestAgentCLIMatchRenames(t *testing.T) {
	e := cliMatchEnv(t)
	index := e.ifindexes()["ens5"]
	file := e.matchIntent("match.json", "lan0", `{"mac": "`+nicMAC+`", "driver": "veth", "name": "ens*"}`)
	if plan := e.mustRun(0, "plan", file); !strings.Contains(plan.stdout, "flap") || !strings.Contains(plan.stdout, "renamed lan0") {
		t.Errorf("plan does not show the rename as a flap: %s", plan)
	}
	e.mustRun(0, "apply", file)
	e.wantMatched("lan0", index)
	if res := e.mustRun(0, "apply", "--json", file); strings.Contains(res.stdout, `"op"`) {
		t.Errorf("second apply ran operations: %s", res.stdout)
	}
	shown := e.mustRun(0, "show", "--json").stdout
	var doc struct {
		Interfaces []struct {
			Name  string
			Match map[string]string
		}
	}
	if err := json.Unmarshal([]byte(shown), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(shown, `"match"`) || !strings.Contains(shown, `"driver": "veth"`) {
		t.Errorf("show --json does not print the match: %s", shown)
	}
	again := e.writeFile("shown.json", shown)
	if res := e.mustRun(0, "apply", "--json", again); strings.Contains(res.stdout, `"op"`) {
		t.Errorf("applying show --json ran operations: %s", res.stdout)
	}

	e.ip("link", "set", "lan0", "down")
	e.ip("link", "set", "lan0", "name", "ens5")
	e.ip("link", "set", "ens5", "up")
	if res := e.mustRun(1, "check", file); !strings.Contains(res.stdout, "interface/lan0") {
		t.Errorf("check after a rename back: %s", res)
	}
	e.mustRun(0, "apply", file)
	e.wantMatched("lan0", index)

	e.mustRun(0, "apply", e.writeFile("none.json", `{"version": 1}`))
	if got := e.ifindexes(); got["ens5"] != index || got["lan0"] != 0 {
		t.Errorf("leaving the intent: links %v, want ens5 back with ifindex %v", got, index)
	}
}

// wantMatched checks with ip -d -j link and ip -j addr that name is the
// NIC of ifindex index (ens5's MAC, up) with the intent's address, and
// that ens5 is gone.
func (e *cliEnv) wantMatched(name string, index float64) {
	e.t.Helper()
	l := e.link(name)
	flags, _ := json.Marshal(l["flags"])
	if l["ifindex"] != index || l["address"] != nicMAC || !strings.Contains(string(flags), `"UP"`) {
		e.t.Errorf("ip -d -j link %s: %v, want ifindex %v, address %s, UP", name, l, index, nicMAC)
	}
	if _, ok := e.ifindexes()["ens5"]; ok {
		e.t.Errorf("ens5 is still there")
	}
	addrs := e.ipJSON("addr", "show", "dev", name)
	if b, _ := json.Marshal(addrs); !strings.Contains(string(b), `"local":"192.0.2.10"`) {
		e.t.Errorf("ip -j addr show dev %s: %s, want 192.0.2.10", name, b)
	}
}

// No match, two matches and a name another NIC carries fail with errors
// naming the match, the candidates and both NICs, block the address, and
// change nothing in the kernel.
func TestAgentCLIMatchRefusals(t *testing.T) {
	e := cliMatchEnv(t)
	before := e.ifindexes()
	snap := e.snapshot()
	for _, tc := range []struct{ name, ifname, match, says string }{
		{"none", "lan0", `{"mac": "02:00:00:00:09:09"}`, "no NIC matches mac 02:00:00:00:09:09"},
		{"two", "lan0", `{"driver": "veth", "name": "ens5*"}`, "more than one NIC matches driver veth name ens5*: ens5, ens5-peer; nothing renamed"},
		{"clash", "uplink0", `{"mac": "` + nicMAC + `"}`, "the NIC it matches is ens5, and uplink0 name is another link's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.mustRun(1, "apply", e.matchIntent(tc.name+".json", tc.ifname, tc.match))
			if !strings.Contains(res.stderr, tc.says) || !strings.Contains(res.stderr, "address/"+tc.ifname+"/192.0.2.10/24") {
				t.Errorf("apply: %s\nwant %q and the blocked address", res, tc.says)
			}
			if got := e.ifindexes(); len(got) != len(before) || got["ens5"] != before["ens5"] {
				t.Errorf("links %v, want %v", got, before)
			}
			if s := e.snapshot(); s != snap {
				t.Errorf("the kernel changed:\n%s\nwant\n%s", s, snap)
			}
		})
	}
}
