package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// Each object goes into the subgraph of the file that defines it, with
// the items that exist because of it (addresses, ports); dependencies
// cross files.
func TestRenderFilesSubgraphs(t *testing.T) {
	files := map[string]*intent.Intent{
		"10-links.json": parse(t, `{"version": 1, "interfaces": [
			{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]},
			{"name": "br0", "type": "bridge"},
			{"name": "lan0", "type": "veth", "veth": {"peer": "lan0p"}, "master": "br0"}]}`),
		"20-routing.json": parse(t, `{"version": 1,
			"routes": [{"to": "default", "via": "192.0.2.1", "dev": "uplink0"}],
			"sysctls": {"net.ipv4.ip_forward": "1"},
			"firewall": {"chains": [{"table": "filter", "name": "FWD", "family": "both", "rules": ["-j ACCEPT"]}]}}`),
		"sub/30-nbr.json": parse(t, `{"version": 1,
			"neighbors": [{"dev": "br0", "ip": "10.0.0.9", "mac": "02:00:00:00:00:09"}]}`),
	}
	g, err := RenderFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"interface/uplink0":              "10-links.json",
		"address/uplink0/192.0.2.10/24":  "10-links.json",
		"interface/br0":                  "10-links.json",
		"interface/lan0":                 "10-links.json",
		"port/lan0":                      "10-links.json",
		"route/main 0.0.0.0/0 metric 0":  "20-routing.json",
		"sysctl/net.ipv4.ip_forward":     "20-routing.json",
		"iptables-chain/ipv4/filter/FWD": "20-routing.json",
		"iptables-chain/ipv6/filter/FWD": "20-routing.json",
		"neighbor/br0/10.0.0.9":          "sub%2F30-nbr.json",
	}
	for _, ref := range g.Refs() {
		scope, _ := g.ScopeOf(ref)
		if want[ref.String()] != scope {
			t.Errorf("%s is in subgraph %q, want %q", ref, scope, want[ref.String()])
		}
		delete(want, ref.String())
	}
	for ref := range want {
		t.Errorf("%s missing", ref)
	}
	if sub := g.SubGraph(SubgraphName("sub/30-nbr.json")); sub == nil || sub.Len() != 1 {
		t.Errorf("subgraph of sub/30-nbr.json: %v", sub)
	}
	if f := FileOfSubgraph(SubgraphName("sub/30-nbr.json")); f != "sub/30-nbr.json" {
		t.Errorf("FileOfSubgraph = %q", f)
	}
	route := dg.ItemRef{Type: items.TypeRoute, Name: "main 0.0.0.0/0 metric 0"}
	deps := g.Dependencies(route)
	if len(deps) != 3 || deps[2].RequiredItem != items.AddressRef("uplink0", mustPrefix("192.0.2.10/24")) {
		t.Errorf("route across files depends on %v", deps)
	}
}

// An object that two files define is reported on both, and nothing is
// rendered.
func TestRenderFilesConflict(t *testing.T) {
	files := map[string]*intent.Intent{
		"a.json": parse(t, `{"version": 1, "interfaces": [{"name": "eth0", "type": "physical"}]}`),
		"b.json": parse(t, `{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "mtu": 9000}]}`),
	}
	g, err := RenderFiles(files)
	if g != nil {
		t.Error("got a graph despite a conflict")
	}
	want := `a.json: interfaces[0]: interface "eth0" is also defined at interfaces[0] in b.json
b.json: interfaces[0]: interface "eth0" is also defined at interfaces[0] in a.json`
	if got := errorLines(err); got != want {
		t.Errorf("errors:\n%s\nwant:\n%s", got, want)
	}
}

// Validation errors of a merged intent name the file of the object, even
// when the problem is a reference into another file.
func TestRenderFilesErrorsNameTheFile(t *testing.T) {
	_, err := Load(map[string][]byte{
		"a.json": []byte(`{"version": 1, "interfaces": [{"name": "eth0", "type": "physical"}]}`),
		"b.json": []byte(`{"version": 1, "routes": [{"to": "default", "via": "192.0.2.1", "dev": "eth1"}]}`),
	})
	if got, want := errorLines(err), `b.json: routes[0].dev: interface "eth1" is not defined`; got != want {
		t.Errorf("errors:\n%s\nwant:\n%s", got, want)
	}
}

// ParseFiles reports the problems of every file, each with its file name,
// and returns the files that parsed.
func TestParseFiles(t *testing.T) {
	parsed, err := ParseFiles(map[string][]byte{
		"bad.json":  []byte(`{"version": 1, "interfaces": [{"name": "x", "typo": 1}]}`),
		"good.json": []byte(`{"version": 1}`),
		"v2.json":   []byte(`{"version": 2}`),
	})
	if _, ok := parsed["good.json"]; !ok || len(parsed) != 1 {
		t.Errorf("parsed %v", parsed)
	}
	got := errorLines(err)
	for _, want := range []string{`bad.json: interfaces[0]: unknown field "typo"`, "v2.json: version: 2 is not supported"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %q lack %q", got, want)
		}
	}
}

// Every problem of every file in one run (issue 29, point 4): the shape
// errors of one object do not hide the semantic errors of the others,
// which keep their paths in the document (a.json's routes[3], not [2]);
// a reference to an interface whose own entry is broken (eth0) is not
// reported again as undefined; a file that parsed is judged with the
// rest (b.json's route through a.json's br1); a chain left out of a
// nested list keeps its neighbours' paths.
func TestLoadReportsEveryProblem(t *testing.T) {
	files := map[string][]byte{
		"a.json": []byte(`{"version": 1,
			"interfaces": [
				{"name": "eth0", "type": "physical", "adresses": ["192.0.2.10/24"]},
				{"name": "br0", "type": "bridge", "mtu": "big"},
				{"name": "br1", "type": "bridge", "addresses": ["198.51.100.1/33"]}],
			"routes": [
				{"to": "203.0.113.0/24", "via": "192.0.2.1", "dev": "eth0"},
				{"to": "203.0.114.0/24", "dev": "nosuch0"},
				{"to": "10.0.0.0/8", "dev": "br1", "metric": "x"},
				{"to": "10.1.0.1/8", "dev": "br1"}],
			"firewall": {"chains": [
				{"table": "filter", "name": "A", "rules": [{"bogus": 1}]},
				{"table": "nosuch", "name": "B"}]}}`),
		"b.json": []byte(`{"version": 1, "routes": [{"to": "192.0.2.0/33", "dev": "br1"}, {"to": "198.18.0.0/15", "dev": "br1"}]}`),
	}
	_, err := Load(files)
	var got []string
	for _, fe := range intent.FieldErrors(err) {
		got = append(got, fe.Error())
	}
	want := []string{
		`a.json: interfaces[0]: unknown field "adresses"; did you mean "addresses"?`,
		`a.json: interfaces[1].mtu: expected an integer, got a string`,
		`a.json: routes[2].metric: expected an integer, got a string`,
		`a.json: firewall.chains[0].rules[0]: expected a string, got an object`,
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing %q", w)
		}
	}
	for _, sem := range []string{"a.json: interfaces[2].addresses[0]:", "a.json: routes[1].dev: interface \"nosuch0\" is not defined",
		"a.json: routes[3].to: 10.1.0.1/8 has host bits set", "a.json: firewall.chains[1].table:", "b.json: routes[0].to:"} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, sem) }) {
			t.Errorf("no problem starting %q", sem)
		}
	}
	for _, g := range got {
		if strings.Contains(g, `"eth0" is not defined`) || strings.Contains(g, "b.json: routes[1]") {
			t.Errorf("a problem that is none: %q", g)
		}
	}
	if t.Failed() {
		t.Logf("got:\n%s", strings.Join(got, "\n"))
	}
}
