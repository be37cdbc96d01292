//go:build !vmtest

package corpus_test

import (
	"strings"
	"testing"
)

// Defects the corpus found, each reduced to the smallest intent that shows
// it, end to end through the CLI.

// A chain that jumps to another chain of the intent is created after it,
// also when the table's transaction fails for a third chain and the
// operations are retried one by one: only the broken chain fails.
func TestCorpusDefectChainJumpOrder(t *testing.T) {
	e := newEnv(t, false)
	file := e.writeFile("chains.json", `{"version": 1, "firewall": {"chains": [
		{"table": "filter", "name": "NA-A", "rules": ["-j NA-B"]},
		{"table": "filter", "name": "NA-B", "jumpFrom": "INPUT", "rules": ["-j ACCEPT"]},
		{"table": "filter", "name": "NA-BAD", "rules": ["-m nosuchmatch -j ACCEPT"]}]}}`)
	res := e.netagent("apply", file)
	if res.code != 1 || !strings.Contains(res.stderr, "iptables-chain/ipv4/filter/NA-BAD: failed") {
		t.Fatalf("apply: want NA-BAD to fail: %s", res)
	}
	if strings.Contains(res.stderr, "NA-A: failed") {
		t.Errorf("NA-A failed with NA-BAD: %s", res)
	}
	if !e.try("iptables", "-C", "NA-A", "-j", "NA-B") {
		t.Errorf("NA-A is not in the kernel:\n%s", e.exec("iptables-save"))
	}
}
