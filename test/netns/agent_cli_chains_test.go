//go:build !vmtest

package netns_test

import (
	"slices"
	"strings"
	"testing"
)

// forwardRules lists the FORWARD rules of iptables-save (prog is
// iptables-save or ip6tables-save), without the "-A FORWARD " prefix.
func (e *cliEnv) forwardRules(prog string) []string {
	e.t.Helper()
	var out []string
	for _, line := range strings.Split(e.exec(prog, "-t", "filter"), "\n") {
		if r, ok := strings.CutPrefix(line, "-A FORWARD "); ok {
			out = append(out, r)
		}
	}
	return out
}

// checkForward compares the FORWARD chain of both families with want.
func (e *cliEnv) checkForward(want ...string) {
	e.t.Helper()
	for _, prog := range []string{"iptables-save", "ip6tables-save"} {
		if got := e.forwardRules(prog); !slices.Equal(got, want) {
			e.t.Errorf("%s FORWARD:\n  got  %q\n  want %q", prog, got, want)
		}
	}
}

// applyConverges applies an intent file and checks that one apply was
// enough: a second plans nothing and leaves the kernel as it was, and check
// finds no difference.
func (e *cliEnv) applyConverges(file string) {
	e.t.Helper()
	e.mustRun(0, "apply", file)
	before := e.snapshot()
	if ops := e.planOps(file); len(ops) != 0 {
		e.t.Errorf("plan after apply: %q, want nothing", ops)
	}
	e.mustRun(0, "apply", file)
	e.mustRun(0, "check", file)
	if after := e.snapshot(); after != before {
		e.t.Errorf("the second apply changed the kernel:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// Issue 7: chains jumping from the same built-in chain with no position
// both claimed position 1, and every apply swapped them ("still a modify
// after 3 passes"). Now netagent's jumps in FORWARD are one block, ordered
// by name here, in both families; foreign rules stay after it, in their own
// order; a chain leaving the middle of the block lets the rest close up.
func TestAgentCLIChainsSharingAHook(t *testing.T) {
	e := cliNewEnv(t)
	foreign := []string{"-i foreign0 -j ACCEPT", "-o foreign0 -j DROP"}
	for _, prog := range []string{"iptables", "ip6tables"} {
		for _, r := range foreign {
			e.exec(prog, append([]string{"-A", "FORWARD"}, strings.Fields(r)...)...)
		}
	}
	chain := func(name string) string {
		return `{"table": "filter", "name": "` + name + `", "jumpFrom": "FORWARD", "family": "both",
			"rules": ["-i uplink0 -j ACCEPT"]}`
	}
	jump := func(name string) string { return "-m comment --comment netagent -j " + name }

	three := e.writeFile("three.json", `{"version": 1, "firewall": {"chains": [`+
		chain("NA-C")+`, `+chain("NA-A")+`, `+chain("NA-B")+`]}}`)
	e.applyConverges(three)
	e.checkForward(append([]string{jump("NA-A"), jump("NA-B"), jump("NA-C")}, foreign...)...)

	two := e.writeFile("two.json", `{"version": 1, "firewall": {"chains": [`+chain("NA-C")+`, `+chain("NA-A")+`]}}`)
	e.applyConverges(two)
	e.checkForward(append([]string{jump("NA-A"), jump("NA-C")}, foreign...)...)
	if out := e.exec("iptables-save", "-t", "filter"); strings.Contains(out, "NA-B") {
		t.Errorf("NA-B left behind:\n%s", out)
	}

	// Explicit positions order the block, which starts at the first: after
	// the first foreign rule.
	placed := e.writeFile("placed.json", `{"version": 1, "firewall": {"chains": [`+
		strings.Replace(chain("NA-C"), `"family"`, `"position": 2, "family"`, 1)+`, `+
		strings.Replace(chain("NA-A"), `"family"`, `"position": 3, "family"`, 1)+`]}}`)
	e.applyConverges(placed)
	e.checkForward(foreign[0], jump("NA-C"), jump("NA-A"), foreign[1])
}
