//go:build !vmtest

package netns_test

import (
	"strings"
	"testing"
)

// cliRoutingIntent has a multipath route with weights and onlink, an IPv6
// route with pref and mtu, and rules with every new selector and action.
const cliRoutingIntent = `{"version": 1,
  "interfaces": [
    {"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24", "2001:db8::10/64"]},
    {"name": "lan0", "type": "veth", "veth": {"peer": "lan0-peer"}, "addresses": ["198.51.100.1/24"]}
  ],
  "routes": [
    {"to": "10.200.0.0/16", "table": 100, "mtu": 1400, "nexthops": [
      {"via": "192.0.2.1", "dev": "uplink0", "weight": 1}, {"via": "198.51.100.2", "weight": 3},
      {"via": "203.0.113.1", "dev": "lan0", "onlink": true}]},
    {"to": "2001:db8:9::/48", "via": "2001:db8::1", "dev": "uplink0", "pref": "high", "mtu": 1400}
  ],
  "rules": [
    {"priority": 10, "not": true, "from": "10.0.0.0/8", "ipproto": "tcp", "sport": "1000-2000", "dport": "443",
      "uidrange": "1000-1999", "suppressPrefixlength": 0, "table": 100},
    {"priority": 12, "family": "ipv4", "iif": "lan0", "action": "goto", "goto": 20},
    {"priority": 20, "to": "10.99.0.0/16", "action": "prohibit"},
    {"priority": 21, "family": "ipv6", "ipproto": "udp", "dport": "53", "uidrange": "0", "action": "blackhole"}
  ]}`

// apply converges the new route and rule kinds, a second apply writes
// nothing, check passes at once, show --json applies back to the same
// state; a foreign multipath route and rule stay, are listed by show, and
// check names the foreign route that holds an intended route's identity.
func TestAgentCLIRoutingFeatures(t *testing.T) {
	e := cliNewEnv(t)
	e.ip("rule", "add", "pref", "300", "not", "ipproto", "tcp", "dport", "22", "lookup", "200")
	file := e.writeFile("routing.json", cliRoutingIntent)
	e.mustRun(0, "apply", file)
	e.ip("route", "add", "10.201.0.0/16", "proto", "static", "nexthop", "via", "192.0.2.1", "dev", "uplink0", "nexthop", "dev", "uplink0")
	e.mustRun(0, "check", file)
	if res := e.mustRun(0, "apply", file); !strings.Contains(res.stdout, "converged: 0 operations") || strings.Contains(res.stderr, "kernel operation") {
		t.Errorf("second apply: %s", res)
	}
	if out := e.ip("route", "show", "10.200.0.0/16", "table", "100"); !strings.Contains(out, "nexthop via 198.51.100.2 dev lan0 weight 3") ||
		!strings.Contains(out, "onlink") || !strings.Contains(out, "mtu 1400") {
		t.Errorf("ip route: %s", out)
	}
	if out := e.ip("rule", "show"); !strings.Contains(out, "12:\tfrom all iif lan0 goto 20 proto 211") ||
		!strings.Contains(out, "300:\tnot from all ipproto tcp dport 22 lookup 200") {
		t.Errorf("ip rule: %s", out)
	}

	show := e.mustRun(0, "show", "--all") // other owners' routes are read for --all only
	for _, want := range []string{"foreign route 10.201.0.0/16 table main metric 0 scope global nexthop via 192.0.2.1 dev uplink0 weight 1 nexthop dev uplink0 weight 1 proto 4",
		"foreign rule ipv4 300: not from all ipproto tcp dport 22 lookup 200 proto 0",
		"route 10.200.0.0/16 table 100 metric 0 scope global mtu 1400 nexthop via 192.0.2.1 dev uplink0 weight 1"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, show.stdout)
		}
	}
	shown := e.writeFile("shown.json", e.mustRun(0, "show", "--json").stdout)
	if res := e.mustRun(0, "apply", shown); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("applying show --json: %s", res)
	}

	// Someone takes the multipath route's identity: check says by whom,
	// apply refuses, and their route stays.
	e.ip("route", "del", "10.200.0.0/16", "table", "100")
	e.ip("route", "add", "10.200.0.0/16", "table", "100", "proto", "static", "nexthop", "via", "192.0.2.1", "nexthop", "via", "198.51.100.2")
	res := e.mustRun(1, "check", file)
	if !strings.Contains(res.stdout, "route/table 100 10.200.0.0/16 metric 0: missing") ||
		!strings.Contains(res.stdout, "held by foreign route 10.200.0.0/16 table 100 metric 0") {
		t.Errorf("check over a foreign route: %s", res)
	}
	e.mustRun(1, "apply", file)
	if out := e.ip("route", "show", "10.200.0.0/16", "table", "100"); !strings.Contains(out, "proto static") {
		t.Errorf("their route was touched: %s", out)
	}
	if out := e.ip("route", "show", "10.201.0.0/16"); !strings.Contains(out, "proto static") {
		t.Errorf("their other route was touched: %s", out)
	}
}
