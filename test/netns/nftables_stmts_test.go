//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// nftCase is a chain of a statements test: its rules as the intent
// writes them (JSON) and as an operator writes them for nft.
type nftCase struct {
	name, base, baseJSON string
	rules                [][2]string // {intent JSON, nft text}
}

// nftStmtTables are tables using every statement and match the intent
// has beyond the first layer: icmp types, limit, log, reject (each kind,
// each family's default), redirect, nat address and port ranges,
// negated set lookups.
var nftStmtTables = []struct {
	family, name, sets, setsNft string
	chains                      []nftCase
}{
	{"inet", "netagent",
		`[{"name": "blocked", "type": "ipv4_addr", "elements": ["203.0.113.9"]}, {"name": "open", "type": "inet_service", "elements": ["22", "443"]}]`,
		"set blocked { type ipv4_addr; elements = { 203.0.113.9 }; }\n" + `set open { type inet_service; elements = { 22, 443 }; }`,
		[]nftCase{
			{"input", "type filter hook input priority 0; policy drop;", `"type": "filter", "hook": "input", "priority": 0, "policy": "drop"`, [][2]string{
				{`{"saddr": "!@blocked", "protocol": "icmp", "icmpType": "echo-request", "limit": {"rate": 10, "per": "second", "burst": 20}, "verdict": "accept"}`,
					`ip saddr != @blocked meta l4proto icmp icmp type echo-request limit rate 10/second burst 20 packets accept`},
				{`{"protocol": "icmpv6", "icmpType": "nd-neighbor-solicit", "verdict": "accept"}`, `meta l4proto icmpv6 icmpv6 type nd-neighbor-solicit accept`},
				{`{"protocol": "icmpv6", "icmpType": "200", "verdict": "drop"}`, `meta l4proto icmpv6 icmpv6 type 200 drop`},
				{`{"protocol": "tcp", "dport": "!@open", "log": {"prefix": "closed: ", "level": "info"}, "reject": {"with": "tcp reset"}}`,
					`meta l4proto tcp tcp dport != @open log prefix "closed: " level info reject with tcp reset`},
				{`{"limit": {"rate": 1, "per": "minute", "over": true}, "counter": true, "log": {}, "reject": {"with": "icmp host-unreachable"}}`,
					`limit rate over 1/minute counter log reject with icmp type host-unreachable`},
				{`{"log": {"level": "audit"}, "reject": {"with": "icmpv6 admin-prohibited"}}`, `log level audit reject with icmpv6 type admin-prohibited`},
				{`{"limit": {"rate": 3, "per": "day"}, "reject": {"with": "icmpx admin-prohibited"}}`, `limit rate 3/day reject with icmpx type admin-prohibited`},
				{`{"log": {"level": "warn"}, "reject": {}}`, `log level warn reject`},
			}},
			{"pre", "type nat hook prerouting priority dstnat;", `"type": "nat", "hook": "prerouting", "priority": "dstnat"`, [][2]string{
				{`{"protocol": "tcp", "dport": "80", "redirect": {"port": "8080"}}`, `meta l4proto tcp tcp dport 80 redirect to :8080`},
				{`{"protocol": "udp", "dport": "53", "redirect": {"port": "5300-5310"}}`, `meta l4proto udp udp dport 53 redirect to :5300-5310`},
				{`{"iifname": "uplink0", "redirect": {}}`, `iifname "uplink0" redirect`},
				{`{"protocol": "udp", "dport": "5000-5010", "dnat": "192.0.2.1-192.0.2.9:6000-6010"}`,
					`meta l4proto udp udp dport 5000-5010 dnat ip to 192.0.2.1-192.0.2.9:6000-6010`},
				{`{"protocol": "tcp", "dport": "8443", "dnat": "192.0.2.1:443"}`, `meta l4proto tcp tcp dport 8443 dnat ip to 192.0.2.1:443`},
			}},
			{"post", "type nat hook postrouting priority srcnat;", `"type": "nat", "hook": "postrouting", "priority": "srcnat"`, [][2]string{
				{`{"protocol": "tcp", "snat": "[2001:db8::1]:1024-2048"}`, `meta l4proto tcp snat ip6 to [2001:db8::1]:1024-2048`},
				{`{"oifname": "uplink0", "snat": "198.51.100.1-198.51.100.4"}`, `oifname "uplink0" snat ip to 198.51.100.1-198.51.100.4`},
			}},
		}},
	{"ip", "netagent4", "", "", []nftCase{
		{"fw", "type filter hook forward priority 0;", `"type": "filter", "hook": "forward", "priority": 0`, [][2]string{
			{`{"protocol": "icmp", "icmpType": "destination-unreachable", "verdict": "accept"}`, `meta l4proto icmp icmp type destination-unreachable accept`},
			{`{"reject": {}}`, `reject`},
			{`{"reject": {"with": "icmp admin-prohibited"}}`, `reject with icmp type admin-prohibited`},
			// prefixes: a byte-aligned one loads only its bytes, unmasked
			{`{"saddr": "10.1.2.0/24", "daddr": "10.0.0.0/8", "verdict": "accept"}`, `ip saddr 10.1.2.0/24 ip daddr 10.0.0.0/8 accept`},
			{`{"saddr": "10.1.0.0/20", "daddr": "192.0.2.7", "verdict": "drop"}`, `ip saddr 10.1.0.0/20 ip daddr 192.0.2.7 drop`},
			{`{"saddr": "0.0.0.0/0", "daddr": "172.16.0.0/16", "protocol": "tcp", "dport": "22", "verdict": "accept"}`,
				`ip saddr 0.0.0.0/0 ip daddr 172.16.0.0/16 meta l4proto tcp tcp dport 22 accept`},
		}},
	}},
	{"ip6", "netagent6", "", "", []nftCase{
		{"out", "type filter hook output priority 0;", `"type": "filter", "hook": "output", "priority": 0`, [][2]string{
			{`{"protocol": "icmpv6", "icmpType": "echo-request", "verdict": "accept"}`, `meta l4proto icmpv6 icmpv6 type echo-request accept`},
			{`{"reject": {}}`, `reject`},
			{`{"reject": {"with": "icmpv6 addr-unreachable"}}`, `reject with icmpv6 type addr-unreachable`},
			{`{"saddr": "2001:db8::/32", "daddr": "2001:db8:8000::/33", "verdict": "accept"}`, `ip6 saddr 2001:db8::/32 ip6 daddr 2001:db8:8000::/33 accept`},
			{`{"daddr": "fe80::/10", "verdict": "accept"}`, `ip6 daddr fe80::/10 accept`},
		}},
	}},
}

// nftStmtIntent is the intent of nftStmtTables.
func nftStmtIntent() string {
	var tables []string
	for _, t := range nftStmtTables {
		var chains []string
		for _, c := range t.chains {
			chains = append(chains, fmt.Sprintf(`{"name": %q, %s, "rules": [%s]}`, c.name, c.baseJSON, strings.Join(column(c.rules, 0), ", ")))
		}
		sets := ""
		if t.sets != "" {
			sets = `"sets": ` + t.sets + ", "
		}
		tables = append(tables, fmt.Sprintf(`{"family": %q, "name": %q, %s"chains": [%s]}`, t.family, t.name, sets, strings.Join(chains, ",\n")))
	}
	return `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical"}], "nftables": {"tables": [` + strings.Join(tables, ",\n") + `]}}`
}

// nftStmtOracle is nft's script of the same tables, each named with
// suffix (the oracle is nft itself).
func nftStmtOracle(suffix string) string {
	var b strings.Builder
	for _, t := range nftStmtTables {
		fmt.Fprintf(&b, "table %s %s%s {\n%s\n", t.family, t.name, suffix, t.setsNft)
		for _, c := range t.chains {
			fmt.Fprintf(&b, "chain %s {\n%s\n%s\n}\n", c.name, c.base, strings.Join(column(c.rules, 1), "\n"))
		}
		b.WriteString("}\n")
	}
	return b.String()
}

func column(rules [][2]string, i int) []string {
	var out []string
	for _, r := range rules {
		out = append(out, r[i])
	}
	return out
}

// nftRulesJSON returns each rule of a table as nft -j lists it: "chain
// expr-json".
func nftRulesJSON(e *cliEnv, family, name string) []string {
	var out []string
	for _, o := range nftJSON(e, "table", family, name) {
		if raw, ok := o["rule"]; ok {
			var v struct {
				Chain string
				Expr  json.RawMessage
			}
			json.Unmarshal(raw, &v)
			out = append(out, v.Chain+" "+string(v.Expr))
		}
	}
	return out
}

var nftHandles = regexp.MustCompile(`(?m)^(\S+ \S+ \S+)( \d+)+$`)

// nftRulesNetlink returns the rules of a table as the kernel holds them
// (nft --debug=netlink list), without the table's name and the handles.
func nftRulesNetlink(e *cliEnv, family, name string) string {
	out := e.exec("nft", "--debug=netlink", "list", "table", family, name)
	if i := strings.Index(out, "\ntable "); i >= 0 {
		out = out[:i] // the listing that follows the expressions
	}
	out = strings.ReplaceAll(out, family+" "+name+" ", family+" T ")
	return nftHandles.ReplaceAllString(out, "$1")
}

// Each statement netagent writes is the one nft writes for the same rule:
// the kernel holds the same expressions (nft --debug=netlink list) and
// nft -j lists the same rules; a second apply writes nothing (the
// read-back decodes every statement to the intent's model).
func TestNftablesStatements(t *testing.T) {
	e := cliNewEnv(t)
	e.exec("nft", "-f", e.writeFile("oracle.nft", nftStmtOracle("_nft")))
	file := e.writeFile("stmts.json", nftStmtIntent())
	e.mustRun(0, "apply", file)

	for _, tab := range nftStmtTables {
		got, want := nftRulesJSON(e, tab.family, tab.name), nftRulesJSON(e, tab.family, tab.name+"_nft")
		n := 0
		for _, c := range tab.chains {
			n += len(c.rules)
		}
		if len(got) != n {
			t.Errorf("%s %s: nft -j lists %d rules, want %d:\n%s", tab.family, tab.name, len(got), n, strings.Join(got, "\n"))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s %s: nft -j list\n got  %s\n want %s", tab.family, tab.name, strings.Join(got, "\n      "), strings.Join(want, "\n      "))
		}
		if g, w := nftRulesNetlink(e, tab.family, tab.name), nftRulesNetlink(e, tab.family, tab.name+"_nft"); g != w {
			t.Errorf("%s %s: the kernel's expressions\n got\n%s\n want\n%s", tab.family, tab.name, g, w)
		}
	}
	if res := e.mustRun(0, "apply", file); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply wrote: %s", res)
	}
	// show --json is the read-back as an intent: applied, it writes nothing
	// (an ip6 table's reject included, which reads back as icmp).
	shown := e.mustRun(0, "show", "--json").stdout
	if !strings.Contains(shown, `"with": "icmpv6 port-unreachable"`) || !strings.Contains(shown, `"icmpType": "nd-neighbor-solicit"`) {
		t.Errorf("show --json lacks the ip6 table's default reject or an icmpv6 type:\n%s", shown)
	}
	if res := e.mustRun(0, "apply", e.writeFile("shown.json", shown)); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("apply of show --json wrote: %s", res)
	}
}
