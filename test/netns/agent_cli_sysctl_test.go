//go:build !vmtest

package netns_test

import (
	"strings"
	"testing"
)

// Writing net.ipv6.conf.all.forwarding (like net.ipv4.ip_forward) rewrites
// every interface's forwarding key. With both in the intent, the
// per-interface key must be set first, so that the value saved to be
// restored is its real original, and restored after the global one:
// removing the intent brings both back. ("all" sorts before "uplink0", so
// the intent's own order would get this wrong.)
func TestAgentCLISysctlForwardingOriginals(t *testing.T) {
	e := cliNewEnv(t)
	get := func(key string) string { return strings.TrimSpace(e.exec("sysctl", "-n", key)) }
	e.exec("sysctl", "-qw", "net.ipv6.conf.all.forwarding=0", "net.ipv6.conf.uplink0.forwarding=0")

	on := e.writeFile("fwd.json", `{"version": 1,
  "interfaces": [{"name": "uplink0", "type": "physical"}],
  "sysctls": {"net.ipv6.conf.all.forwarding": "1", "net.ipv6.conf.uplink0.forwarding": "1"}}`)
	ops := e.planOps(on)
	if len(ops) != 2 || !strings.Contains(ops[0], "uplink0.forwarding") || !strings.Contains(ops[1], "all.forwarding") {
		t.Fatalf("plan %q: want the per-interface key first", ops)
	}
	e.mustRun(0, "apply", on)
	if get("net.ipv6.conf.all.forwarding") != "1" || get("net.ipv6.conf.uplink0.forwarding") != "1" {
		t.Fatal("sysctls not applied")
	}
	e.mustRun(0, "apply", on) // and again: nothing to write

	off := e.writeFile("off.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical"}]}`)
	e.mustRun(0, "apply", off)
	if f, i := get("net.ipv6.conf.all.forwarding"), get("net.ipv6.conf.uplink0.forwarding"); f != "0" || i != "0" {
		t.Fatalf("after removal all.forwarding=%s uplink0.forwarding=%s, want the originals 0 and 0", f, i)
	}
}

// net.ipv4.ip_forward and net.ipv4.conf.all.forwarding are one kernel
// value. An intent that moves from one name to the other must keep the
// real original: the old name's original is restored before the new name
// saves it, so removing the intent brings forwarding back off, and at no
// step does the value the intent asks for go missing at the end.
func TestAgentCLISysctlForwardingRenamed(t *testing.T) {
	e := cliNewEnv(t)
	get := func() string { return strings.TrimSpace(e.exec("sysctl", "-n", "net.ipv4.ip_forward")) }
	e.exec("sysctl", "-qw", "net.ipv4.ip_forward=0")
	intent := func(key string) string {
		return e.writeFile("fwd.json", `{"version": 1, "sysctls": {"`+key+`": "1"}}`)
	}
	e.mustRun(0, "apply", intent("net.ipv4.ip_forward"))
	e.mustRun(0, "apply", intent("net.ipv4.conf.all.forwarding"))
	if get() != "1" {
		t.Fatalf("forwarding %s after the rename, want 1", get())
	}
	e.mustRun(0, "check", intent("net.ipv4.conf.all.forwarding"))
	e.mustRun(0, "apply", e.writeFile("off.json", `{"version": 1}`))
	if get() != "0" {
		t.Fatalf("forwarding %s after removal, want the original 0", get())
	}
}

// A value the kernel reads as a number in another spelling ("02", as an
// operator may write it) is not rewritten at every apply, and check finds
// no difference: netagent compares values as the kernel reads them.
func TestAgentCLISysctlLeadingZero(t *testing.T) {
	e := cliNewEnv(t)
	file := e.writeFile("rp.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical"}],
  "sysctls": {"net.ipv4.conf.uplink0.rp_filter": "02"}}`)
	e.mustRun(0, "apply", file)
	if got := strings.TrimSpace(e.exec("sysctl", "-n", "net.ipv4.conf.uplink0.rp_filter")); got != "2" {
		t.Fatalf("rp_filter %s, want 2", got)
	}
	if res := e.mustRun(0, "apply", file); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply: %s", res)
	}
	e.mustRun(0, "check", file)
}
