package intent

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// parseFiles parses documents keyed by file name.
func parseFiles(t *testing.T, docs map[string]string) map[string]*Intent {
	t.Helper()
	files := map[string]*Intent{}
	for name, d := range docs {
		files[name] = mustParse(t, d)
	}
	return files
}

// interfaceNames lists the names of the interfaces of in.
func interfaceNames(in *Intent) []string {
	var names []string
	for _, ifc := range in.Interfaces {
		names = append(names, ifc.Name)
	}
	return names
}

func TestMergeConflictOnBothFiles(t *testing.T) {
	files := parseFiles(t, map[string]string{
		"b.json": doc(`"interfaces": [{"name": "eth1", "type": "physical"}, {"name": "eth0", "type": "physical", "mtu": 9000}],
			"routes": [{"to": "default", "via": "192.0.2.1", "metric": 100}],
			"sysctls": {"net.ipv4.ip_forward": "1", "net.ipv6.conf.all.forwarding": "1"}`),
		"a.json": doc(`"interfaces": [{"name": "eth0", "type": "physical"}, {"name": "eth2", "type": "physical"}],
			"routes": [{"to": "0.0.0.0/0", "via": "192.0.2.254", "metric": 100}, {"to": "default", "via": "192.0.2.1"}],
			"sysctls": {"net.ipv4.ip_forward": "0"}`),
	})
	merged, err := Merge(files)
	checkMessages(t, err, []string{
		`a.json: interfaces[0]: interface "eth0" is also defined at interfaces[1] in b.json`,
		`b.json: interfaces[1]: interface "eth0" is also defined at interfaces[0] in a.json`,
		`a.json: routes[0]: IPv4 route to default in table main, metric 100 is also defined at routes[0] in b.json`,
		`b.json: routes[0]: IPv4 route to default in table main, metric 100 is also defined at routes[0] in a.json`,
		`a.json: sysctls["net.ipv4.ip_forward"]: sysctl "net.ipv4.ip_forward" is also defined at sysctls["net.ipv4.ip_forward"] in b.json`,
		`b.json: sysctls["net.ipv4.ip_forward"]: sysctl "net.ipv4.ip_forward" is also defined at sysctls["net.ipv4.ip_forward"] in a.json`,
	})
	if got, want := interfaceNames(merged), []string{"eth2", "eth1"}; !slices.Equal(got, want) {
		t.Errorf("merged interfaces = %q, want %q (a.json's first, neither eth0)", got, want)
	}
	if len(merged.Routes) != 1 || merged.Routes[0].Metric != 0 {
		t.Errorf("merged routes = %+v, want only a.json's metric 0 route", merged.Routes)
	}
	if want := map[string]string{"net.ipv6.conf.all.forwarding": "1"}; !maps.Equal(merged.Sysctls, want) {
		t.Errorf("merged sysctls = %v, want %v", merged.Sysctls, want)
	}
	if got, want := merged.SysctlOrigins["net.ipv6.conf.all.forwarding"], (Origin{"b.json", `sysctls["net.ipv6.conf.all.forwarding"]`}); got != want {
		t.Errorf("sysctl origin = %v, want %v", got, want)
	}
}

func TestMergeIdentities(t *testing.T) {
	files := parseFiles(t, map[string]string{
		"1.json": doc(`"interfaces": [{"name": "v0", "type": "veth", "veth": {"peer": "v0-peer"}}],
			"rules": [{"priority": 10, "from": "10.0.0.0/8", "table": 100}],
			"neighbors": [{"dev": "v0", "ip": "2001:db8::1", "mac": "02:00:00:00:00:01"}],
			"firewall": {"chains": [{"table": "filter", "name": "A", "family": "both"}, {"table": "nat", "name": "A"}]}`),
		"2.json": doc(`"interfaces": [{"name": "v0-peer", "type": "physical"}],
			"rules": [{"priority": 10, "from": "10.0.0.0/8", "table": 200}, {"priority": 10, "from": "10.0.0.0/8", "oif": "x", "table": 200}],
			"neighbors": [{"dev": "v0", "ip": "2001:DB8:0::1", "mac": "02:00:00:00:00:02"}],
			"firewall": {"chains": [{"table": "filter", "name": "A", "family": "ipv6"}, {"table": "nat", "name": "A", "family": "ipv6"}]}`),
	})
	merged, err := Merge(files)
	checkMessages(t, err, []string{
		`1.json: interfaces[0]: interface "v0-peer" is also defined at interfaces[0] in 2.json`,
		`2.json: interfaces[0]: interface "v0-peer" is also defined at interfaces[0] in 1.json`,
		`1.json: rules[0]: IPv4 rule at priority 10 from 10.0.0.0/8 to all is also defined at rules[0] in 2.json`,
		`2.json: rules[0]: IPv4 rule at priority 10 from 10.0.0.0/8 to all is also defined at rules[0] in 1.json`,
		`1.json: neighbors[0]: neighbor 2001:db8::1 on "v0" is also defined at neighbors[0] in 2.json`,
		`2.json: neighbors[0]: neighbor 2001:db8::1 on "v0" is also defined at neighbors[0] in 1.json`,
		`1.json: firewall.chains[0]: IPv6 chain "A" in table filter is also defined at firewall.chains[0] in 2.json`,
		`2.json: firewall.chains[0]: IPv6 chain "A" in table filter is also defined at firewall.chains[0] in 1.json`,
	})
	if len(merged.Interfaces) != 0 || len(merged.Rules) != 1 || len(merged.Neighbors) != 0 || len(merged.Firewall.Chains) != 2 {
		t.Errorf("merged = %+v", merged)
	}
}

func TestMergeThreeFiles(t *testing.T) {
	br := doc(`"interfaces": [{"name": "br0", "type": "bridge"}]`)
	_, err := Merge(parseFiles(t, map[string]string{"x": br, "y": br, "z": doc("")}))
	checkMessages(t, err, []string{
		`x: interfaces[0]: interface "br0" is also defined at interfaces[0] in y`,
		`y: interfaces[0]: interface "br0" is also defined at interfaces[0] in x`,
	})
	_, err = Merge(parseFiles(t, map[string]string{"x": br, "y": br, "z": br}))
	checkMessages(t, err, []string{
		`x: interfaces[0]: interface "br0" is also defined at interfaces[0] in y and interfaces[0] in z`,
		`y: interfaces[0]: interface "br0" is also defined at interfaces[0] in x and interfaces[0] in z`,
		`z: interfaces[0]: interface "br0" is also defined at interfaces[0] in x and interfaces[0] in y`,
	})
}

func TestMergeDuplicatesWithinAFileAreForValidate(t *testing.T) {
	merged, err := Merge(parseFiles(t, map[string]string{
		"a.json": doc(`"interfaces": [{"name": "br0", "type": "bridge"}, {"name": "br0", "type": "bridge"}]`),
	}))
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	checkMessages(t, merged.Validate(), []string{
		`a.json: interfaces[1].name: interface "br0" is already defined at interfaces[0] in a.json`,
	})
}

func TestMergedValidateNamesFiles(t *testing.T) {
	merged, err := Merge(parseFiles(t, map[string]string{
		"links.json": string(readTestdata(t, "bonded.json")),
		"routes.json": doc(`"routes": [{"to": "default", "via": "10.100.0.254", "dev": "bond0.100"}, {"to": "10.0.0.0/8", "dev": "eth9"}],
			"sysctls": {"kernel.panic": "1"},
			"firewall": {"chains": [{"table": "filter", "name": "A", "rules": ["-j \"ACCEPT"]}]}`),
	}))
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	checkMessages(t, merged.Validate(), []string{
		`routes.json: routes[1].dev: interface "eth9" is not defined`,
		`routes.json: sysctls["kernel.panic"]: only net.* keys are allowed`,
		`routes.json: firewall.chains[0].rules[0]: unbalanced double quote at column 4`,
	})
}

func TestMergeSkipsBadFiles(t *testing.T) {
	merged, err := Merge(map[string]*Intent{
		"nil.json": nil,
		"v2.json":  {Version: 2, Interfaces: []Interface{{Name: "x", Type: LinkBridge}}},
		"ok.json":  {Version: 1, Interfaces: []Interface{{Name: "y", Type: LinkBridge}}},
	})
	checkMessages(t, err, []string{`nil.json: intent is nil`, `v2.json: version: 2 is not supported (want 1)`})
	if got := interfaceNames(merged); !slices.Equal(got, []string{"y"}) {
		t.Errorf("merged interfaces = %q, want [y]", got)
	}
}

func TestMergeIsDeterministic(t *testing.T) {
	files := map[string]*Intent{}
	for _, name := range []string{"c", "a", "e", "b", "d"} {
		files[name] = &Intent{Version: 1, Interfaces: []Interface{{Name: "if-" + name, Type: LinkBridge}}}
	}
	for range 20 {
		merged, err := Merge(files)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := interfaceNames(merged), []string{"if-a", "if-b", "if-c", "if-d", "if-e"}; !slices.Equal(got, want) {
			t.Fatalf("merged interfaces = %q, want %q", got, want)
		}
	}
}

func TestMergeLeavesInputsAlone(t *testing.T) {
	in := mustParse(t, string(readTestdata(t, "gateway.json")))
	merged, err := Merge(map[string]*Intent{"gw.json": in})
	if err != nil {
		t.Fatal(err)
	}
	if err := merged.Validate(); err != nil {
		t.Fatal(err)
	}
	if in.Interfaces[0].Origin != (Origin{}) || in.Firewall.Chains[0].Args != nil {
		t.Errorf("Merge or Validate changed the input")
	}
	if got, want := merged.Interfaces[4].Origin, (Origin{"gw.json", "interfaces[4]"}); got != want {
		t.Errorf("origin = %v, want %v", got, want)
	}
}

// TestWithoutConflictsLeavesTheObjectOutOfEveryFile: an object two files
// define is left out of both, the rest of each file stays, a third file
// without conflict is returned as it is, the inputs do not change, and
// merging the result gives what Merge keeps, without errors.
func TestWithoutConflictsLeavesTheObjectOutOfEveryFile(t *testing.T) {
	files := parseFiles(t, map[string]string{
		"a.json": doc(`"interfaces": [{"name": "eth0", "type": "physical"}, {"name": "eth2", "type": "physical"}],
			"routes": [{"to": "0.0.0.0/0", "via": "192.0.2.254", "metric": 100}, {"to": "default", "via": "192.0.2.1"}],
			"sysctls": {"net.ipv4.ip_forward": "0", "net.ipv4.conf.all.rp_filter": "1"},
			"firewall": {"chains": [{"table": "filter", "name": "NA-IN", "rules": ["-j ACCEPT"]}]}`),
		"b.json": doc(`"interfaces": [{"name": "eth1", "type": "physical"}, {"name": "eth0", "type": "physical", "mtu": 9000},
				{"name": "v0", "type": "veth", "veth": {"peer": "eth2"}}],
			"routes": [{"to": "default", "via": "192.0.2.1", "metric": 100}],
			"sysctls": {"net.ipv4.ip_forward": "1"},
			"firewall": {"chains": [{"table": "filter", "name": "NA-IN", "rules": ["-j DROP"]}]}`),
		"c.json": doc(`"routes": [{"to": "198.51.100.0/24", "via": "192.0.2.1"}]`),
	})
	before := maps.Clone(files)
	beforeA := *files["a.json"]
	out, err := WithoutConflicts(files)
	_, mergeErr := Merge(files)
	if err == nil || err.Error() != mergeErr.Error() {
		t.Errorf("conflicts:\n%v\nwant Merge's:\n%v", err, mergeErr)
	}
	for _, want := range []string{
		`a.json: interfaces[1]: interface "eth2" is also defined at interfaces[2] in b.json`,
		`b.json: firewall.chains[0]: `,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("conflicts lack %q", want)
		}
	}
	a, b := out["a.json"], out["b.json"]
	if got := interfaceNames(a); len(got) != 0 {
		t.Errorf("a.json interfaces %q, want none (eth0 and eth2, b's veth peer, are both conflicts)", got)
	}
	if got, want := interfaceNames(b), []string{"eth1"}; !slices.Equal(got, want) {
		t.Errorf("b.json interfaces %q, want %q", got, want)
	}
	if len(a.Routes) != 1 || a.Routes[0].Metric != 0 || len(b.Routes) != 0 {
		t.Errorf("routes: a %+v, b %+v; want only a's metric 0 route", a.Routes, b.Routes)
	}
	if !maps.Equal(a.Sysctls, map[string]string{"net.ipv4.conf.all.rp_filter": "1"}) || len(b.Sysctls) != 0 {
		t.Errorf("sysctls: a %v, b %v", a.Sysctls, b.Sysctls)
	}
	if len(a.Firewall.Chains) != 0 || len(b.Firewall.Chains) != 0 {
		t.Errorf("chains: a %v, b %v", a.Firewall.Chains, b.Firewall.Chains)
	}
	if out["c.json"] != files["c.json"] {
		t.Error("c.json, without conflicts, was copied")
	}
	if !maps.Equal(files, before) || len(files["a.json"].Interfaces) != 2 || len(files["a.json"].Sysctls) != 2 ||
		len(beforeA.Routes) != 2 || len(files["b.json"].Firewall.Chains) != 1 {
		t.Error("the inputs changed")
	}
	merged, err := Merge(out)
	if err != nil {
		t.Fatalf("merging the result: %v", err)
	}
	want, _ := Merge(files)
	if !slices.Equal(interfaceNames(merged), interfaceNames(want)) || len(merged.Routes) != len(want.Routes) ||
		!maps.Equal(merged.Sysctls, want.Sysctls) || len(merged.Firewall.Chains) != len(want.Firewall.Chains) {
		t.Errorf("Merge(WithoutConflicts) = %+v, want what Merge keeps: %+v", merged, want)
	}
}

// TestConflictsComeInSectionOrder: Merge and WithoutConflicts report
// conflicts section by section in the order of the schema, the sysctls
// before the chains, as Validate reports its problems.
func TestConflictsComeInSectionOrder(t *testing.T) {
	one := `"interfaces": [{"name": "eth0", "type": "physical"}],
		"routes": [{"to": "default", "via": "192.0.2.1"}],
		"rules": [{"priority": 100, "from": "10.0.0.0/8", "table": 10}],
		"neighbors": [{"dev": "eth0", "ip": "192.0.2.9", "mac": "02:00:00:00:00:09"}],
		"sysctls": {"net.ipv4.ip_forward": "1"},
		"firewall": {"chains": [{"table": "filter", "name": "NA-IN"}]}`
	files := parseFiles(t, map[string]string{"a.json": doc(one), "b.json": doc(one)})
	var want []string
	for _, what := range []struct{ path, key string }{
		{"interfaces[0]", `interface "eth0"`},
		{"routes[0]", "IPv4 route to default in table main, metric 0"},
		{"rules[0]", "IPv4 rule at priority 100 from 10.0.0.0/8 to all"},
		{"neighbors[0]", `neighbor 192.0.2.9 on "eth0"`},
		{`sysctls["net.ipv4.ip_forward"]`, `sysctl "net.ipv4.ip_forward"`},
		{"firewall.chains[0]", `IPv4 chain "NA-IN" in table filter`},
	} {
		want = append(want,
			"a.json: "+what.path+": "+what.key+" is also defined at "+what.path+" in b.json",
			"b.json: "+what.path+": "+what.key+" is also defined at "+what.path+" in a.json")
	}
	_, err := Merge(files)
	checkMessages(t, err, want)
	_, err = WithoutConflicts(files)
	checkMessages(t, err, want)
}

// TestMergeOneFileSharesItsLists: Merge of one parsed file takes its
// routes, rules and neighbours as they are (a list of 100k routes is not
// copied), and the merged intent's problems still name the file and the
// path of each object, as a copy with Origins set gave them.
func TestMergeOneFileSharesItsLists(t *testing.T) {
	files := parseFiles(t, map[string]string{
		"r.json": doc(`"interfaces": [{"name": "eth0", "type": "physical", "addresses": ["192.0.2.2/24"]}],
			"routes": [{"to": "10.0.0.0/8", "dev": "eth0"}, {"to": "10.1.0.0/16", "dev": "eth9"}, {"to": "10.0.0.0/8", "dev": "eth0"}],
			"rules": [{"priority": 100, "table": 100, "family": "ipv5"}],
			"neighbors": [{"dev": "eth9", "ip": "192.0.2.1", "mac": "02:00:00:00:00:01"}]`),
	})
	in := files["r.json"]
	merged, err := Merge(files)
	if err != nil {
		t.Fatal(err)
	}
	if &merged.Routes[0] != &in.Routes[0] || &merged.Rules[0] != &in.Rules[0] || &merged.Neighbors[0] != &in.Neighbors[0] {
		t.Error("Merge copied the lists of its one file")
	}
	checkMessages(t, merged.Validate(), []string{
		`r.json: routes[1].dev: interface "eth9" is not defined`,
		`r.json: routes[2]: IPv4 route to 10.0.0.0/8 in table main, metric 0 is already defined at routes[0] in r.json`,
		`r.json: rules[0].family: "ipv5" is not one of ipv4, ipv6`,
		`r.json: neighbors[0].dev: interface "eth9" is not defined`,
	})
	if in.Routes[1].Origin != (Origin{}) {
		t.Errorf("Merge changed its input: %+v", in.Routes[1].Origin)
	}
	if got, want := merged.Locate(merged.Routes[2].Origin, "routes", 2), (Origin{"r.json", "routes[2]"}); got != want {
		t.Errorf("Locate = %v, want %v", got, want)
	}
	if got := in.Locate(in.Routes[2].Origin, "routes", 2); got != (Origin{Path: "routes[2]"}) {
		t.Errorf("Locate in the unmerged file = %v", got)
	}
}
