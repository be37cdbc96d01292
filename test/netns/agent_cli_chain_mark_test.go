//go:build !vmtest

package netns_test

import (
	"strings"
	"testing"
)

// Flushing netagent's chains by hand (iptables -F, the whole table, then
// one chain) removes their ownership marks with their rules. The next
// apply repairs them — rules, marks and jumps — instead of failing them as
// someone else's for ever; check finds the drift before and nothing after.
// An empty chain of the same name that netagent never made stays foreign.
func TestAgentCLIFlushedChainsAreRepaired(t *testing.T) {
	e := cliNewEnv(t)
	file := e.writeFile("fw.json", `{"version": 1, "firewall": {"chains": [
  {"table": "filter", "name": "NA-FWD", "jumpFrom": "FORWARD", "rules": ["-i br-lan -j ACCEPT"]},
  {"table": "filter", "name": "NA-IN", "jumpFrom": "INPUT", "rules": ["-p tcp --dport 22 -j ACCEPT"]}
]}}`)
	e.mustRun(0, "apply", file)
	want := e.exec("iptables-save", "-t", "filter")
	strip := func(s string) string { // counters and comments vary
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "-") || strings.HasPrefix(l, ":NA-") {
				out = append(out, strings.Fields(l)[0]+" "+strings.Join(strings.Fields(l)[1:], " "))
			}
		}
		return strings.Join(out, "\n")
	}
	for _, flush := range [][]string{{"-F"}, {"-F", "NA-IN"}} {
		e.exec("iptables", flush...)
		e.mustRun(1, "check", file)
		if res := e.mustRun(0, "apply", file); strings.Contains(res.stderr, "not owned") {
			t.Fatalf("iptables %v: %s", flush, res)
		}
		if got := e.exec("iptables-save", "-t", "filter"); strip(got) != strip(want) {
			t.Errorf("after iptables %v and apply:\n%s\nwant:\n%s", flush, got, want)
		}
		e.mustRun(0, "check", file)
	}

	// Someone else's empty chain, of a name netagent never made.
	e.exec("iptables", "-N", "NA-OTHER")
	other := e.writeFile("other.json", `{"version": 1, "firewall": {"chains": [
  {"table": "filter", "name": "NA-OTHER", "rules": ["-j ACCEPT"]}]}}`)
	if res := e.mustRun(1, "apply", "--wait", "0", other); !strings.Contains(res.stderr, "not owned") {
		t.Errorf("apply over someone's empty chain: %s", res)
	}
}
