//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// show --all lists, beside netagent's objects, the others' — links,
// addresses, routes of every table and both families, permanent
// neighbours, rules, iptables chains and the foreign rules in built-in
// chains — each marked foreign, in text and in --json; plain show and
// show --json are as before (no foreign addresses, neighbours or chains).
func TestAgentCLIShowAllListsForeign(t *testing.T) {
	e := cliNewEnv(t)
	e.placeForeign()
	e.mustRun(0, "apply", cliGatewayFile)
	e.ip("addr", "add", "2001:db8:97::1/64", "dev", "foreign0")
	e.ip("-6", "route", "add", "2001:db8:99::/48", "via", "2001:db8:97::fe", "table", "300")
	e.ip("neigh", "add", "10.97.0.9", "lladdr", "02:00:00:00:97:09", "dev", "foreign0", "nud", "permanent")
	e.ip("neigh", "add", "10.97.0.10", "lladdr", "02:00:00:00:97:10", "dev", "foreign0", "nud", "reachable")

	text := e.mustRun(0, "show", "--all").stdout
	for _, want := range []string{
		"links:\n  interface br-lan bridge",
		"  foreign link foreign0 ",
		"  foreign link uplink0-peer ",
		"addresses:\n", "  address 192.0.2.10/24 dev uplink0",
		"  foreign address 10.97.0.1/24 dev foreign0 scope global proto 0\n",
		"  foreign address 2001:db8:97::1/64 dev foreign0 proto 0\n",
		"  route 0.0.0.0/0 via 192.0.2.1 dev uplink0 table main metric 100",
		"  foreign route 10.99.0.0/16 via 10.97.0.254 dev foreign0 table main metric 0",
		"  foreign route 2001:db8:99::/48 via 2001:db8:97::fe dev foreign0 table 300 metric 1024",
		"  foreign rule ipv4 500: from 10.98.0.0/16 lookup 50 proto 0\n",
		"neighbors:\n  neighbor 192.168.50.20 dev br-lan lladdr 02:00:00:00:00:20 permanent\n",
		"  foreign neighbor 10.97.0.9 dev foreign0 lladdr 02:00:00:00:97:09 permanent proto 0\n",
		"  foreign iptables-chain ipv4/filter/FOREIGN 1 rules\n      -A FOREIGN -s 10.98.0.0/16 -j RETURN\n",
		"  foreign rules in iptables-chain ipv4/filter/INPUT (built-in): 1 rules not netagent's\n      -A INPUT -j FOREIGN\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("show --all lacks %q:\n%s", want, text)
		}
	}
	// The uplink is not netagent's, but its addresses and routes are.
	if !regexp.MustCompile(`(?m)^  foreign link uplink0 index .*\(netagent's objects on it\)$`).MatchString(text) ||
		regexp.MustCompile(`(?m)^  foreign link foreign0 .*\(netagent's`).MatchString(text) {
		t.Errorf("show --all does not mark the uplink alone as carrying netagent's objects:\n%s", text)
	}
	for _, unwanted := range []string{"10.97.0.10", "fe80:", "127.0.0.1", "foreign address 192.0.2.10", "foreign iptables-chain ipv4/filter/NETAGENT",
		"built-in iptables-chain ipv4/filter/FORWARD", "foreign interface"} {
		if strings.Contains(text, unwanted) {
			t.Errorf("show --all lists %q:\n%s", unwanted, text)
		}
	}

	var doc struct {
		Format int `json:"format"`
		Intent struct {
			Interfaces []struct{ Name string } `json:"interfaces"`
		} `json:"intent"`
		Foreign []struct {
			Kind, Object, Holds string
			BuiltIn             bool
			Rules               [][]string
		} `json:"foreign"`
	}
	js := e.mustRun(0, "show", "--all", "--json").stdout
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("show --all --json: %v\n%s", err, js)
	}
	if doc.Format != 1 || len(doc.Intent.Interfaces) == 0 {
		t.Errorf("show --all --json: format %d, intent %+v", doc.Format, doc.Intent)
	}
	var got []string
	for _, f := range doc.Foreign {
		got = append(got, f.Kind+" "+f.Holds+" "+f.Object)
	}
	for _, want := range []string{
		"interface  foreign0",
		"address address/foreign0/10.97.0.1/24 10.97.0.1/24 dev foreign0 scope global proto 0",
		"route route/table 300 2001:db8:99::/48 metric 1024 ",
		"rule rule/ipv4 500: from 10.98.0.0/16 lookup 50 ",
		"neighbor neighbor/foreign0/10.97.0.9 ",
		"iptables-chain  ipv4/filter/FOREIGN",
		"iptables-chain  ipv4/filter/INPUT",
	} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("show --all --json lacks %q:\n%s", want, strings.Join(got, "\n"))
		}
	}
	for _, s := range got {
		if strings.Contains(s, "192.0.2.10") || strings.Contains(s, "NETAGENT") || strings.Contains(s, "br-lan") {
			t.Errorf("show --all --json lists netagent's %q as foreign", s)
		}
	}

	plain := e.mustRun(0, "show").stdout
	if strings.Contains(plain, "10.97.0.9") || strings.Contains(plain, "FOREIGN") || strings.Contains(plain, "2001:db8:97::1") {
		t.Errorf("show without --all lists others' addresses, neighbours or chains:\n%s", plain)
	}
}
