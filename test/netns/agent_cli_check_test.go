//go:build !vmtest

package netns_test

import (
	"strings"
	"testing"
	"time"
)

// check exits 0 while the kernel matches the intent and 1, naming the
// field with both values, after someone changes an owned route by hand.
// apply repairs an owned route in place; a route someone replaced with
// one of their own (protocol boot, which ip -j leaves out) is not netagent's any more: apply
// refuses to take it over, and says so, until it is gone.
func TestAgentCLICheck(t *testing.T) {
	e := cliNewEnv(t)
	e.mustRun(0, "apply", cliGatewayFile)
	e.mustRun(0, "check", cliGatewayFile)

	e.ip("route", "replace", "default", "via", "192.0.2.254", "dev", "uplink0", "metric", "100", "proto", "211")
	res := e.mustRun(1, "check", cliGatewayFile)
	if !strings.Contains(res.stdout, "route/main 0.0.0.0/0 metric 100: Gw: want 192.0.2.1, have 192.0.2.254") {
		t.Errorf("check after a hand change: %s", res)
	}
	res = e.mustRun(0, "apply", cliGatewayFile, "--log-level", "info")
	if !strings.Contains(res.stdout, "converged: 1 operation") ||
		!strings.Contains(res.stderr, `item="route/main 0.0.0.0/0 metric 100" op=modify outcome=ok`) {
		t.Errorf("repairing apply: %s", res)
	}
	e.mustRun(0, "check", cliGatewayFile)

	e.ip("route", "replace", "default", "via", "192.0.2.254", "dev", "uplink0", "metric", "100")
	res = e.mustRun(1, "check", cliGatewayFile)
	if !strings.Contains(res.stdout, "route/main 0.0.0.0/0 metric 100: missing") {
		t.Errorf("check after a takeover by hand: %s", res)
	}
	res = e.mustRun(1, "apply", cliGatewayFile)
	if !strings.Contains(res.stderr, "route/main 0.0.0.0/0 metric 100: failed: create failed: ") ||
		!strings.Contains(res.stderr, "not owned") || !strings.Contains(res.stdout, "not converged: 1 item") {
		t.Errorf("apply over a foreign route: %s", res)
	}
	if r := e.ipJSON("route", "show", "default"); len(r) != 1 || r[0]["gateway"] != "192.0.2.254" || r[0]["protocol"] != nil {
		t.Errorf("the hand-made route was touched: %v", r)
	}
	e.ip("route", "del", "default", "metric", "100")
	e.mustRun(0, "apply", cliGatewayFile)
	e.mustRun(0, "check", cliGatewayFile)
}

// An invalid intent is rejected with every problem and its path, and the
// kernel is byte-identical before and after: addresses, routes of every
// table, rules and iptables, in both families. The same holds when the
// invalid file comes with valid ones, and for a file that conflicts with
// another.
func TestAgentCLIInvalidIntent(t *testing.T) {
	e := cliNewEnv(t)
	e.mustRun(0, "apply", cliGatewayFile)
	bad := e.writeFile("bad.json", `{"version": 1,
		"interfaces": [
			{"name": "br-x", "type": "bridge", "addresses": ["192.168.60.1/24"]},
			{"name": "v100", "type": "vlan", "vlan": {"parent": "br-x", "id": 5000}}],
		"routes": [{"to": "10.0.0.0/8", "via": "2001:db8::1"}, {"to": "10.1.0.0/16"}],
		"firewall": {"chains": [{"table": "filter", "name": "X", "rules": ["-t nat -j ACCEPT"]}]}}`)
	conflict := e.writeFile("conflict.json", `{"version": 1, "interfaces": [{"name": "br-lan", "type": "bridge", "mtu": 9000}]}`)
	w := e.watch()
	w.settle(e)
	before := e.stableSnapshot()
	w.collect(0)
	for _, files := range [][]string{{bad}, {cliGatewayFile, bad}} {
		res := e.mustRun(1, "apply", files...)
		for _, want := range []string{
			bad + ": interfaces[1].vlan.id: 5000 is out of range 1-4094",
			bad + ": routes[0].via: 2001:db8::1 is IPv6, but to 10.0.0.0/8 is IPv4",
			bad + ": routes[1]: a unicast route needs via or dev",
			bad + `: firewall.chains[0].rules[0]: "-t" is not allowed in a rule`,
			"nothing was changed",
		} {
			if !strings.Contains(res.stderr, want) {
				t.Errorf("apply %v: stderr lacks %q:\n%s", files, want, res.stderr)
			}
		}
	}
	res := e.mustRun(1, "apply", cliGatewayFile, conflict)
	if !strings.Contains(res.stderr, conflict+`: interfaces[0]: interface "br-lan" is also defined at interfaces[1] in `+cliGatewayFile) {
		t.Errorf("conflict: %s", res)
	}
	e.mustRun(1, "validate", bad)
	e.mustRun(1, "plan", bad)
	e.mustRun(1, "check", bad)
	if events := w.collect(300 * time.Millisecond); len(events) > 0 {
		t.Errorf("an invalid intent changed the kernel: %v", events)
	}
	if after := e.snapshot(); after != before {
		t.Errorf("an invalid intent changed the kernel:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	e.mustRun(0, "check", cliGatewayFile)
}

// validate accepts both examples and prints every problem of a bad file.
func TestAgentCLIValidate(t *testing.T) {
	e := &cliEnv{t: t, bin: cliBinary(t), stateDir: t.TempDir()}
	for _, f := range []string{cliGatewayFile, "../../examples/bonded.json"} {
		if res := e.mustRun(0, "validate", f); !strings.HasPrefix(res.stdout, "valid: 1 file") {
			t.Errorf("validate %s: %s", f, res)
		}
	}
	bad := e.writeFile("bad.json", `{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "mac": "02:00:00:00:00:01", "mtu": 40}]}`)
	res := e.mustRun(1, "validate", bad)
	for _, want := range []string{bad + ": interfaces[0].mtu: 40 is out of range 68-65535", bad + `: interfaces[0].mac: can only be set on virtual interfaces`} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("validate: stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	e.mustRun(2, "validate")
}
