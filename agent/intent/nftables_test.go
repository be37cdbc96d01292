package intent

import (
	"strings"
	"testing"

	"github.com/netagent/netagent/items"
)

// nftEdge is a valid edge router's table: input policy drop,
// established/related accepted, ssh from a set, masquerade out of wan0,
// a port forward.
const nftEdge = `"nftables": {"tables": [{"family": "inet", "name": "netagent",
  "sets": [{"name": "mgmt", "type": "ipv4_addr", "interval": true, "elements": ["192.0.2.0/24", "198.51.100.7"]},
           {"name": "web", "type": "inet_service", "interval": true, "elements": ["80", "8000-8080"]}],
  "chains": [
    {"name": "input", "type": "filter", "hook": "input", "priority": "filter", "policy": "drop", "rules": [
      {"ctState": ["established", "related"], "verdict": "accept"},
      {"iifname": "lo", "verdict": "accept"},
      {"protocol": "tcp", "dport": "22", "saddr": "@mgmt", "counter": true, "verdict": "accept"},
      {"protocol": "tcp", "dport": "@web", "verdict": "jump", "target": "web"}]},
    {"name": "web", "rules": [{"saddr": "10.0.0.0/8", "verdict": "drop"}, {"verdict": "return"}]},
    {"name": "pre", "type": "nat", "hook": "prerouting", "priority": "dstnat", "rules": [
      {"iifname": "wan0", "protocol": "tcp", "dport": "8443", "dnat": "192.168.1.10:443"}]},
    {"name": "post", "type": "nat", "hook": "postrouting", "priority": 100, "rules": [
      {"oifname": "wan0", "masquerade": true}]}]}]}`

func TestNftablesValid(t *testing.T) {
	in := mustParse(t, doc(nftEdge))
	if err := in.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if got := len(in.Nftables.Tables[0].Chains); got != 4 {
		t.Fatalf("%d chains, want 4", got)
	}
	if p := in.Nftables.Tables[0].Chains[3].Priority; p == nil || p.Value != 100 || p.Name != "" {
		t.Errorf("priority 100 parsed as %+v", p)
	}
}

// TestNftablesRefusals: each field's problem is reported at its JSON path,
// and what the kernel would refuse is refused by Validate.
func TestNftablesRefusals(t *testing.T) {
	const p = "nftables.tables[0]"
	for _, tc := range []struct {
		name, table string
		want        []string
	}{
		{"family", `{"family": "arp", "name": "t"}`,
			[]string{p + `.family: "arp" is not an nftables family (want inet, ip, ip6, bridge, netdev)`}},
		{"table name", `{"family": "inet", "name": "1x"}`,
			[]string{p + `.name: "1x" is not a table name (a letter or '_', then up to 63 letters, digits, '_', '.', '-')`}},
		{"nat statement in a filter chain", `{"family": "inet", "name": "t", "chains": [
			{"name": "f", "type": "filter", "hook": "postrouting", "priority": 0, "rules": [{"masquerade": true}]}]}`,
			[]string{p + `.chains[0].rules[0].masquerade: masquerade is only allowed in a nat chain, and base chain "f" is of type filter`}},
		{"nat through a jump from a filter chain", `{"family": "ip", "name": "t", "chains": [
			{"name": "f", "type": "filter", "hook": "prerouting", "priority": 0, "rules": [{"verdict": "jump", "target": "r"}]},
			{"name": "r", "rules": [{"dnat": "192.0.2.1"}]}]}`,
			[]string{p + `.chains[1].rules[0].dnat: dnat is only allowed in a nat chain, and base chain "f" is of type filter`}},
		{"masquerade on prerouting", `{"family": "ip", "name": "t", "chains": [
			{"name": "n", "type": "nat", "hook": "prerouting", "priority": "dstnat", "rules": [{"masquerade": true}]}]}`,
			[]string{p + `.chains[0].rules[0].masquerade: masquerade is only allowed from hook postrouting, and base chain "n" is on prerouting`}},
		{"ingress outside netdev and inet", `{"family": "ip", "name": "t", "chains": [
			{"name": "i", "type": "filter", "hook": "ingress", "priority": 0, "device": "eth0"}]}`,
			[]string{p + `.chains[0].hook: "ingress" is not a hook of a filter chain in family ip (want prerouting, input, forward, output, postrouting)`}},
		{"ingress without device", `{"family": "netdev", "name": "t", "chains": [
			{"name": "i", "type": "filter", "hook": "ingress", "priority": "filter"}]}`,
			[]string{p + `.chains[0].device: is required for the ingress hook`}},
		{"nat in bridge", `{"family": "bridge", "name": "t", "chains": [
			{"name": "n", "type": "nat", "hook": "postrouting", "priority": 0}]}`,
			[]string{p + `.chains[0].type: a nat chain is only in the inet, ip and ip6 families, not bridge`}},
		{"priority name on the wrong hook", `{"family": "inet", "name": "t", "chains": [
			{"name": "n", "type": "filter", "hook": "input", "priority": "dstnat"}]}`,
			[]string{p + `.chains[0].priority: "dstnat" is not a priority nft defines for hook input in family inet (want a number or raw, mangle, dstnat, filter, security, srcnat)`}},
		{"nat before conntrack", `{"family": "inet", "name": "t", "chains": [
			{"name": "n", "type": "nat", "hook": "prerouting", "priority": "raw"}]}`,
			[]string{p + `.chains[0].priority: -300: a nat chain must run after conntrack (a priority above -200)`}},
		{"jump to a chain not in the table", `{"family": "inet", "name": "t", "chains": [
			{"name": "c", "rules": [{"verdict": "jump", "target": "nowhere"}]}]}`,
			[]string{p + `.chains[0].rules[0].target: chain "nowhere" is not defined in the table`}},
		{"jump to a base chain", `{"family": "inet", "name": "t", "chains": [
			{"name": "b", "type": "filter", "hook": "input", "priority": 0},
			{"name": "c", "rules": [{"verdict": "goto", "target": "b"}]}]}`,
			[]string{p + `.chains[1].rules[0].target: chain "b" is a base chain: the kernel only lets a rule goto to a regular chain`}},
		{"loop", `{"family": "inet", "name": "t", "chains": [
			{"name": "a", "rules": [{"verdict": "jump", "target": "b"}]},
			{"name": "b", "rules": [{"verdict": "goto", "target": "a"}]}]}`,
			[]string{p + `.chains[0].name: chain "a" reaches itself by jump or goto: the kernel refuses loops`,
				p + `.chains[1].name: chain "b" reaches itself by jump or goto: the kernel refuses loops`}},
		{"set of the wrong type", `{"family": "inet", "name": "t", "sets": [{"name": "ports", "type": "inet_service", "elements": ["22"]},
			{"name": "hosts", "type": "ipv4_addr"}], "chains": [
			{"name": "c", "rules": [{"saddr": "@ports"}, {"protocol": "udp", "dport": "@hosts"}, {"daddr": "@none"}]}]}`,
			[]string{p + `.chains[0].rules[0].saddr: set "ports" holds inet_service, not addresses`,
				p + `.chains[0].rules[1].dport: set "hosts" holds ipv4_addr, not inet_service (ports)`,
				p + `.chains[0].rules[2].daddr: set "none" is not defined in the table`}},
		{"set elements", `{"family": "ip", "name": "t", "sets": [{"name": "s", "type": "ipv4_addr", "elements": ["10.0.0.0/8", "::1", "10.0.0.1", "10.0.0.1"]},
			{"name": "v6", "type": "ipv6_addr"}]}`,
			[]string{p + `.sets[0].elements[0]: "10.0.0.0/8" is a prefix or a range: the set needs interval`,
				p + `.sets[0].elements[1]: "::1" is not an element of a set of ipv4_addr`,
				p + `.sets[0].elements[3]: "10.0.0.1" is listed twice`,
				p + `.sets[1].type: a set of ipv6_addr cannot be matched in family ip`}},
		{"verdict maps", `{"family": "inet", "name": "t", "sets": [{"name": "s", "type": "ipv4_addr"}],
			"maps": [{"name": "svc", "type": "inet_service", "elements": [{"key": "22", "verdict": "accept"}, {"key": "80", "verdict": "jump", "target": "nowhere"},
				{"key": "22", "verdict": "drop"}, {"key": "x", "verdict": "accept"}, {"key": "25", "verdict": "jump", "target": "in"}]},
				{"name": "s", "type": "ipv4_addr"}],
			"chains": [{"name": "in", "type": "filter", "hook": "input", "priority": 0, "rules": [
				{"protocol": "tcp", "vmap": {"on": "saddr", "map": "svc"}}, {"vmap": {"on": "dport", "map": "svc"}, "verdict": "accept"},
				{"vmap": {"on": "mark", "map": "none"}}]}]}`,
			[]string{p + `.maps[0].elements[1].target: chain "nowhere" is not defined in the table`,
				p + `.maps[0].elements[2].key: key "22" is already the key of elements[0]`,
				p + `.maps[0].elements[3].key: "x" is not a port or a range lo-hi: "x" is not a port (1-65535)`,
				p + `.maps[0].elements[4].target: chain "in" is a base chain: the kernel only lets a rule jump to a regular chain`,
				p + `.maps[1].name: "s" is already the name of a set of the table`,
				p + `.chains[0].rules[0].vmap.map: map "svc" has keys of inet_service, not ipv4_addr or ipv6_addr (for saddr)`,
				p + `.chains[0].rules[1].vmap.on: a port lookup needs protocol tcp or udp`,
				p + `.chains[0].rules[1].verdict: a rule with a vmap takes its verdict from the map: no verdict besides`,
				p + `.chains[0].rules[2].vmap.on: "mark" is not a field a vmap looks up (want daddr, dport, saddr, sport)`,
				p + `.chains[0].rules[2].vmap.map: map "none" is not defined in the table`}},
		{"set timeouts", `{"family": "ip", "name": "t", "sets": [{"name": "a", "type": "ipv4_addr", "timeout": "1h", "elements": ["10.0.0.1"]},
			{"name": "b", "type": "ipv4_addr", "timeout": "soon"}, {"name": "c", "type": "ipv4_addr", "timeout": "1500us"},
			{"name": "d", "type": "ipv4_addr", "timeout": "0s", "elements": ["10.0.0.1"]}, {"name": "e", "type": "ipv4_addr", "timeout": "2h"}]}`,
			[]string{p + `.sets[0].elements: ` + items.ErrNftTimeoutElements.Error(),
				p + `.sets[1].timeout: timeout "soon" is not a duration such as 1h or 90s`,
				p + `.sets[2].timeout: timeout "1500us": want a duration of whole milliseconds, 0s or more`}},
		{"matches", `{"family": "ip", "name": "t", "chains": [{"name": "c", "rules": [
			{"saddr": "2001:db8::/32", "daddr": "10.0.0.1/8", "dport": "22", "protocol": "gre", "ctState": ["bogus"]},
			{"protocol": "tcp", "sport": "9-3", "iifname": "a/b"}]}]}`,
			[]string{p + `.chains[0].rules[0].saddr: 2001:db8::/32 cannot be matched in family ip`,
				p + `.chains[0].rules[0].daddr: "10.0.0.1/8" has host bits set (want 10.0.0.0/8)`,
				p + `.chains[0].rules[0].protocol: "gre" is not a protocol (want tcp, udp, icmp, icmpv6, sctp or 0-255)`,
				p + `.chains[0].rules[0].dport: a port match needs protocol tcp or udp`,
				p + `.chains[0].rules[0].ctState[0]: "bogus" is not a conntrack state (want invalid, established, related, new, untracked)`,
				p + `.chains[0].rules[1].iifname: "a/b" contains '/', which an interface name cannot`,
				p + `.chains[0].rules[1].sport: "9-3" is not a port or a range lo-hi with lo < hi`}},
		{"statements", `{"family": "inet", "name": "t", "chains": [{"name": "n", "type": "nat", "hook": "postrouting", "priority": "srcnat", "rules": [
			{"snat": "192.0.2.1:99", "masquerade": true, "verdict": "accept", "target": "x"},
			{"snat": "nowhere", "verdict": "continue"}]}]}`,
			[]string{p + `.chains[0].rules[0].snat: a rule has at most one of masquerade, snat, dnat, redirect, reject (it has masquerade, snat)`,
				p + `.chains[0].rules[0].snat: a port to translate to needs protocol tcp or udp`,
				p + `.chains[0].rules[0].target: is only for verdicts jump and goto`,
				p + `.chains[0].rules[1].snat: "nowhere" is not an address or a range a-b, then optionally :port or :lo-hi ([ipv6]:port)`,
				p + `.chains[0].rules[1].verdict: "continue" is not a verdict (want accept, drop, return, jump, goto)`}},
		{"icmp type", `{"family": "ip6", "name": "t", "chains": [{"name": "c", "rules": [
			{"protocol": "icmp", "icmpType": "echo-request"},
			{"protocol": "icmpv6", "icmpType": "echo-bogus"},
			{"protocol": "tcp", "icmpType": "8"}]}]}, {"family": "inet", "name": "u", "chains": [{"name": "c", "rules": [
			{"saddr": "2001:db8::1", "protocol": "icmp", "icmpType": "echo-request"}]}]}`,
			[]string{p + `.chains[0].rules[0].icmpType: an icmp type is not for family ip6 (it is ip's)`,
				p + `.chains[0].rules[1].icmpType: "echo-bogus" is not an icmpv6 type (want a number 0-255 or destination-unreachable, echo-reply, echo-request, ind-neighbor-advert, ind-neighbor-solicit, mld-listener-done, mld-listener-query, mld-listener-report, mld2-listener-report, nd-neighbor-advert, nd-neighbor-solicit, nd-redirect, nd-router-advert, nd-router-solicit, packet-too-big, parameter-problem, router-renumbering, time-exceeded)`,
				p + `.chains[0].rules[2].icmpType: an icmpType match needs protocol icmp or icmpv6`,
				`nftables.tables[1].chains[0].rules[0].icmpType: an icmp type is not for the rule's ip6 addresses (it is ip's)`}},
		{"log and limit", `{"family": "inet", "name": "t", "chains": [{"name": "c", "rules": [
			{"log": {"level": "warning", "prefix": "a\nb"}},
			{"log": {"level": "audit", "prefix": "x"}},
			{"log": {"prefix": "` + strings.Repeat("p", 128) + `"}},
			{"limit": {"rate": 0, "per": "second"}},
			{"limit": {"rate": 5, "per": "fortnight"}},
			{"limit": {"rate": 1, "per": "week", "burst": 30501}},
			{"limit": {"rate": 1, "per": "week", "burst": 30500}},
			{"limit": {"rate": 18446744073709551615, "per": "second"}}]}]}`,
			[]string{p + `.chains[0].rules[0].log.level: "warning" is not a log level nft knows (want emerg, alert, crit, err, warn, notice, info, debug, audit)`,
				p + `.chains[0].rules[0].log.prefix: "a\nb" holds a control character`,
				p + `.chains[0].rules[1].log.prefix: a log at level audit takes no prefix (nft refuses it)`,
				p + `.chains[0].rules[2].log.prefix: is 128 bytes: the kernel keeps at most 127`,
				p + `.chains[0].rules[3].limit.rate: is required and above 0 (the kernel refuses a limit of 0)`,
				p + `.chains[0].rules[4].limit.per: "fortnight" is not a unit of a limit's rate (want second, minute, hour, day, week)`,
				p + `.chains[0].rules[5].limit: 1/week with burst 30501 is beyond what the kernel counts (its EOVERFLOW)`,
				p + `.chains[0].rules[7].limit: 18446744073709551615/second with burst 0 is beyond what the kernel counts (its EOVERFLOW)`}},
		{"reject", `{"family": "ip", "name": "t", "chains": [{"name": "c", "rules": [
			{"reject": {"with": "icmpv6 admin-prohibited"}},
			{"reject": {"with": "tcp reset"}},
			{"protocol": "tcp", "reject": {"with": "icmp bogus"}, "verdict": "drop"},
			{"reject": {"with": "udp reset"}},
			{"reject": {"with": "icmpx admin-prohibited"}}]}]}, {"family": "bridge", "name": "b", "chains": [{"name": "c", "rules": [{"reject": {}}]}]}`,
			[]string{p + `.chains[0].rules[0].reject.with: a reject with icmpv6 is not for family ip (it is ip6's)`,
				p + `.chains[0].rules[1].reject.with: a reject with tcp reset needs protocol tcp`,
				p + `.chains[0].rules[2].reject.with: "bogus" is not an icmp code (want admin-prohibited, frag-needed, host-prohibited, host-unreachable, net-prohibited, net-unreachable, port-unreachable, prot-unreachable)`,
				p + `.chains[0].rules[2].verdict: a rule that rejects has no verdict (reject ends it)`,
				p + `.chains[0].rules[3].reject.with: "udp reset" is not a reject type (want tcp reset, or icmp, icmpv6 or icmpx and a code)`,
				p + `.chains[0].rules[4].reject.with: a reject with icmpx is only for inet tables (nft: abstracted ICMP unreachable not supported in ip)`,
				`nftables.tables[1].chains[0].rules[0].reject: reject is only in the inet, ip and ip6 families, not bridge`}},
		{"reject outside input, forward, output, prerouting", `{"family": "inet", "name": "t", "chains": [
			{"name": "post", "type": "filter", "hook": "postrouting", "priority": 0, "rules": [{"verdict": "jump", "target": "r"}]},
			{"name": "r", "rules": [{"reject": {"with": "icmpx admin-prohibited"}}]}]}`,
			[]string{p + `.chains[1].rules[0].reject: reject is only allowed from hook prerouting, input, forward, output, ingress, and base chain "post" is on postrouting`}},
		{"redirect outside nat chains", `{"family": "ip", "name": "t", "chains": [
			{"name": "in", "type": "filter", "hook": "input", "priority": 0, "rules": [{"redirect": {}}]},
			{"name": "post", "type": "nat", "hook": "postrouting", "priority": "srcnat", "rules": [{"protocol": "tcp", "redirect": {"port": "8080"}}]},
			{"name": "pre", "type": "nat", "hook": "prerouting", "priority": "dstnat", "rules": [{"redirect": {"port": "80"}}, {"protocol": "tcp", "redirect": {"port": "0"}}]}]}`,
			[]string{p + `.chains[2].rules[0].redirect.port: a port to redirect to needs protocol tcp or udp`,
				p + `.chains[2].rules[1].redirect.port: "0" is not a port or a range lo-hi: "0" is not a port (1-65535)`,
				p + `.chains[0].rules[0].redirect: redirect is only allowed in a nat chain, and base chain "in" is of type filter`,
				p + `.chains[1].rules[0].redirect: redirect is only allowed from hook prerouting, output, and base chain "post" is on postrouting`}},
		{"nat ranges", `{"family": "ip", "name": "t", "chains": [{"name": "pre", "type": "nat", "hook": "prerouting", "priority": "dstnat", "rules": [
			{"protocol": "tcp", "dnat": "192.0.2.9-192.0.2.1"},
			{"protocol": "tcp", "dnat": "192.0.2.1:2000-1000"},
			{"protocol": "tcp", "dnat": "2001:db8::1-2001:db8::2"},
			{"dnat": "192.0.2.1-192.0.2.2:80-90"},
			{"protocol": "tcp", "dnat": "192.0.2.1-192.0.2.2:80-90", "redirect": {}}]}]}`,
			[]string{p + `.chains[0].rules[0].dnat: "192.0.2.9-192.0.2.1" is not an address or a range a-b, then optionally :port or :lo-hi ([ipv6]:port)`,
				p + `.chains[0].rules[1].dnat: "192.0.2.1:2000-1000" is not an address or a range a-b, then optionally :port or :lo-hi ([ipv6]:port)`,
				p + `.chains[0].rules[2].dnat: 2001:db8::1 is not an address of family ip`,
				p + `.chains[0].rules[3].dnat: a port to translate to needs protocol tcp or udp`,
				p + `.chains[0].rules[4].redirect: a rule has at most one of masquerade, snat, dnat, redirect, reject (it has dnat, redirect)`}},
		{"negated lookups", `{"family": "inet", "name": "t", "sets": [{"name": "p", "type": "inet_service"}], "chains": [{"name": "c", "rules": [
			{"saddr": "!@p"}, {"protocol": "tcp", "dport": "!@none"}, {"saddr": "!10.0.0.1"}]}]}`,
			[]string{p + `.chains[0].rules[0].saddr: set "p" holds inet_service, not addresses`,
				p + `.chains[0].rules[1].dport: set "none" is not defined in the table`,
				p + `.chains[0].rules[2].saddr: "!10.0.0.1" is not an address or a prefix`}},
		{"regular chain with base fields, reserved name", `{"family": "inet", "name": "t", "chains": [
			{"name": "netagent-owned", "policy": "drop", "priority": 0}]}`,
			[]string{p + `.chains[0].name: "netagent-owned" is the chain that marks netagent's tables`,
				p + `.chains[0].policy: is only for a base chain (one with a hook)`,
				p + `.chains[0].priority: is only for a base chain (one with a hook)`}},
		{"twice", `{"family": "inet", "name": "t", "chains": [{"name": "a"}, {"name": "a"}], "sets": [
			{"name": "s", "type": "ipv4_addr"}, {"name": "s", "type": "ipv4_addr"}]}, {"family": "inet", "name": "t"}`,
			[]string{p + `.sets[1].name: set "s" is already defined in the table`,
				p + `.chains[1].name: chain "a" is already defined in the table`,
				`nftables.tables[1]: nftables table inet t is already defined at ` + p}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := mustParse(t, doc(`"nftables": {"tables": [`+tc.table+`]}`))
			checkMessages(t, in.Validate(), tc.want)
		})
	}
}

// TestNftablesShape: a priority is an integer or a name, nothing else.
func TestNftablesShape(t *testing.T) {
	_, err := Parse([]byte(doc(`"nftables": {"tables": [{"family": "inet", "name": "t", "chains": [
		{"name": "b", "type": "filter", "hook": "input", "priority": [0]}]}]}`)))
	checkMessages(t, err, []string{`nftables.tables[0].chains[0].priority: expected an integer or a name, got an array`})
}

// nftStatements uses every statement and the icmp type match in a
// valid table: the kernel takes it (test/netns applies the same).
const nftStatements = `"nftables": {"tables": [{"family": "inet", "name": "netagent",
  "sets": [{"name": "blocked", "type": "ipv4_addr", "elements": ["203.0.113.9"]}],
  "chains": [
    {"name": "input", "type": "filter", "hook": "input", "priority": 0, "policy": "drop", "rules": [
      {"saddr": "!@blocked", "protocol": "icmp", "icmpType": "echo-request", "limit": {"rate": 10, "per": "second", "burst": 20}, "verdict": "accept"},
      {"protocol": "icmpv6", "icmpType": "nd-neighbor-solicit", "verdict": "accept"},
      {"protocol": "tcp", "dport": "23", "log": {"prefix": "telnet: ", "level": "info"}, "reject": {"with": "tcp reset"}},
      {"limit": {"rate": 1, "per": "minute", "over": true}, "counter": true, "log": {}, "reject": {"with": "icmp host-unreachable"}}]},
    {"name": "pre", "type": "nat", "hook": "prerouting", "priority": "dstnat", "rules": [
      {"protocol": "tcp", "dport": "80", "redirect": {"port": "8080"}},
      {"protocol": "udp", "dport": "5000-5010", "dnat": "192.0.2.1-192.0.2.9:6000-6010"}]},
    {"name": "post", "type": "nat", "hook": "postrouting", "priority": "srcnat", "rules": [
      {"protocol": "tcp", "snat": "[2001:db8::1]:1024-2048"}]}]}]}`

func TestNftablesStatementsValid(t *testing.T) {
	in := mustParse(t, doc(nftStatements))
	if err := in.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	r := in.Nftables.Tables[0].Chains[0].Rules
	if r[0].Limit == nil || r[0].Limit.Burst != 20 || r[2].Reject == nil || r[2].Reject.With != "tcp reset" || r[3].Log == nil {
		t.Errorf("statements parsed as %+v", r)
	}
}
