//go:build !vmtest

package netns_test

import (
	"strings"
	"testing"
)

// nftCheckIntent is a table whose policy, rules and set a test changes
// behind netagent's back.
const nftCheckIntent = `{"version": 1, "nftables": {"tables": [{"family": "inet", "name": "netagent",
  "sets": [{"name": "mgmt", "type": "ipv4_addr", "elements": ["192.0.2.1", "192.0.2.2"]}],
  "chains": [{"name": "input", "type": "filter", "hook": "input", "priority": 0, "policy": "drop", "rules": [
    {"ctState": ["established", "related"], "verdict": "accept"},
    {"saddr": "@mgmt", "protocol": "tcp", "dport": "22", "verdict": "accept"},
    {"protocol": "tcp", "dport": "80", "verdict": "accept"}]}]}]}}`

// check names what another writer changed in a table, attribute by
// attribute: the chain's policy, a rule's port by chain and index, a
// rule added, a set's elements missing and not intended.
func TestNftablesCheckAttributes(t *testing.T) {
	e := cliNewEnv(t)
	file := e.writeFile("nft.json", nftCheckIntent)
	e.mustRun(0, "apply", file)
	e.mustRun(0, "check", file)

	e.exec("nft", "chain inet netagent input { policy accept; }")
	e.exec("nft", "delete element inet netagent mgmt { 192.0.2.2 }; add element inet netagent mgmt { 198.51.100.7 }")
	h := nftRuleHandles(e, "input")
	e.exec("nft", "replace rule inet netagent input handle "+h[2]+" meta l4proto tcp tcp dport 8080 accept")
	e.exec("nft", "add rule inet netagent input meta l4proto udp udp dport 53 accept")

	res := e.mustRun(1, "check", file)
	for _, want := range []string{
		"chain input policy: want drop, have accept",
		`chain input rule 2 dport: want "80", have "8080"`,
		`chain input rule 3: want none, have {"protocol":"udp","dport":"53","verdict":"accept"}`,
		"set mgmt elements: want 192.0.2.2 (missing), have 198.51.100.7 (not intended)",
	} {
		if !strings.Contains(res.stdout+res.stderr, want) {
			t.Errorf("check lacks %q:\n%s", want, res)
		}
	}
	if n := strings.Count(res.stdout+res.stderr, "nft-table/inet/netagent:"); n != 4 {
		t.Errorf("check reports %d differences of the table, want 4:\n%s", n, res)
	}
}

// nftRuleHandles returns the handles of a chain's rules of inet/netagent,
// in order.
func nftRuleHandles(e *cliEnv, chain string) []string {
	var out []string
	for _, line := range strings.Split(e.exec("nft", "-a", "list", "chain", "inet", "netagent", chain), "\n") {
		if i := strings.Index(line, "# handle "); i >= 0 && !strings.Contains(line, "chain ") {
			out = append(out, strings.TrimSpace(line[i+len("# handle "):]))
		}
	}
	return out
}
