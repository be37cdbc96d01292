//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// nftEdgeIntent is an edge router's firewall in netagent's own table:
// input policy drop, established/related accepted, ssh from a management
// set, masquerade out of uplink0.
const nftEdgeIntent = `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical"}],
  "nftables": {"tables": [{"family": "inet", "name": "netagent",
    "sets": [{"name": "mgmt", "type": "ipv4_addr", "interval": true, "elements": ["192.0.2.0/24", "198.51.100.7"]}],
    "chains": [
      {"name": "input", "type": "filter", "hook": "input", "priority": "filter", "policy": "drop", "rules": [
        {"ctState": ["established", "related"], "verdict": "accept"},
        {"saddr": "@mgmt", "protocol": "tcp", "dport": "22", "counter": true, "verdict": "accept"}]},
      {"name": "post", "type": "nat", "hook": "postrouting", "priority": "srcnat", "rules": [
        {"oifname": "uplink0", "masquerade": true}]}]}]}}`

// nftJSON runs `nft -j list ...` in the namespace and returns its objects
// ("nftables" array members), each as {"kind": {...}}.
func nftJSON(e *cliEnv, args ...string) []map[string]json.RawMessage {
	e.t.Helper()
	var out struct {
		Nftables []map[string]json.RawMessage `json:"nftables"`
	}
	if err := json.Unmarshal([]byte(e.exec("nft", append([]string{"-j", "list"}, args...)...)), &out); err != nil {
		e.t.Fatalf("nft -j list %v: %v", args, err)
	}
	return out.Nftables
}

// nftForeign returns `nft -j list ruleset` without netagent's table
// inet/netagent and without the metainfo, as one string.
func nftForeign(e *cliEnv) string {
	e.t.Helper()
	var keep []string
	for _, o := range nftJSON(e, "ruleset") {
		if _, ok := o["metainfo"]; ok {
			continue
		}
		b, _ := json.Marshal(o)
		for _, raw := range o {
			var obj struct{ Family, Table, Name string }
			json.Unmarshal(raw, &obj)
			if obj.Family == "inet" && (obj.Table == "netagent" || obj.Name == "netagent" && obj.Table == "") {
				b = nil
			}
		}
		if b != nil {
			keep = append(keep, string(b))
		}
	}
	return strings.Join(keep, "\n")
}

// The intent's table is in the kernel as the intent means it, read with
// nft (the oracle, not netagent's own read-back); a second apply writes
// nothing; foreign tables and iptables-nft's rules stay byte for byte;
// removing the section deletes the table.
func TestNftablesApply(t *testing.T) {
	e := cliNewEnv(t)
	e.exec("nft", "add table inet other; add chain inet other in { type filter hook input priority 10; policy drop; }; add rule inet other in tcp dport 80 accept")
	e.exec("iptables-nft", "-A", "INPUT", "-s", "203.0.113.0/24", "-j", "ACCEPT")
	foreign := nftForeign(e)
	if !strings.Contains(foreign, `"other"`) || !strings.Contains(foreign, "203.0.113.0") {
		t.Fatalf("the foreign ruleset lacks the table or the iptables rule:\n%s", foreign)
	}

	file := e.writeFile("nft.json", nftEdgeIntent)
	e.mustRun(0, "apply", file)

	var chains, rules, sets []string
	for _, o := range nftJSON(e, "table", "inet", "netagent") {
		for kind, raw := range o {
			var v map[string]any
			json.Unmarshal(raw, &v)
			switch kind {
			case "chain":
				delete(v, "handle")
				b, _ := json.Marshal(v)
				chains = append(chains, string(b))
			case "rule":
				b, _ := json.Marshal(v["expr"])
				rules = append(rules, v["chain"].(string)+" "+string(b))
			case "set":
				b, _ := json.Marshal(map[string]any{"name": v["name"], "type": v["type"], "flags": v["flags"], "elem": v["elem"]})
				sets = append(sets, string(b))
			}
		}
	}
	wantChains := []string{
		`{"family":"inet","name":"netagent-owned","table":"netagent"}`,
		`{"family":"inet","hook":"input","name":"input","policy":"drop","prio":0,"table":"netagent","type":"filter"}`,
		`{"family":"inet","hook":"postrouting","name":"post","policy":"accept","prio":100,"table":"netagent","type":"nat"}`,
	}
	wantRules := []string{
		`input [{"match":{"left":{"ct":{"key":"state"}},"op":"in","right":["established","related"]}},{"accept":null}]`,
		`input [{"match":{"left":{"payload":{"field":"saddr","protocol":"ip"}},"op":"==","right":"@mgmt"}},{"match":{"left":{"payload":{"field":"dport","protocol":"tcp"}},"op":"==","right":22}},{"counter":{"bytes":0,"packets":0}},{"accept":null}]`,
		`post [{"match":{"left":{"meta":{"key":"oifname"}},"op":"==","right":"uplink0"}},{"masquerade":null}]`,
	}
	wantSets := []string{`{"elem":[{"prefix":{"addr":"192.0.2.0","len":24}},"198.51.100.7"],"flags":["interval"],"name":"mgmt","type":"ipv4_addr"}`}
	for _, c := range []struct {
		what      string
		got, want []string
	}{{"chains", chains, wantChains}, {"rules", rules, wantRules}, {"sets", sets, wantSets}} {
		if strings.Join(c.got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("nft -j list table inet netagent: %s\n got  %s\n want %s", c.what, strings.Join(c.got, "\n      "), strings.Join(c.want, "\n      "))
		}
	}

	if res := e.mustRun(0, "apply", file); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply wrote: %s", res)
	}
	if got := nftForeign(e); got != foreign {
		t.Errorf("foreign ruleset changed by the apply:\n before %s\n after  %s", foreign, got)
	}

	e.mustRun(0, "apply", e.writeFile("off.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical"}]}`))
	if out := e.exec("nft", "list", "tables"); strings.Contains(out, "netagent") {
		t.Errorf("table still there after the section's removal: %s", out)
	}
	if got := nftForeign(e); got != foreign {
		t.Errorf("foreign ruleset changed by the removal:\n before %s\n after  %s", foreign, got)
	}
}

// A table of the intent's family and name that netagent did not make is
// a clash: the apply fails on it and leaves it as it was.
func TestNftablesClash(t *testing.T) {
	e := cliNewEnv(t)
	e.exec("nft", "add table inet netagent; add chain inet netagent mine { type filter hook input priority 0; }; add rule inet netagent mine udp dport 53 accept")
	before := e.exec("nft", "-j", "list", "table", "inet", "netagent")
	res := e.netagent("apply", e.writeFile("nft.json", nftEdgeIntent))
	if res.code == 0 || !strings.Contains(res.stdout+res.stderr, "is not netagent's") {
		t.Errorf("apply over a hand-made table: want a clash, got %s", res)
	}
	if after := e.exec("nft", "-j", "list", "table", "inet", "netagent"); after != before {
		t.Errorf("hand-made table changed:\n before %s\n after  %s", before, after)
	}
}
