//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/intent"
)

// cliForeign places objects netagent does not own into the namespace, and
// returns a function that checks, at the end, that they are untouched: a
// dummy link with an address, a route, a rule and an iptables chain with
// a jump to it.
func (e *cliEnv) placeForeign() func() {
	e.t.Helper()
	e.ip("link", "add", "foreign0", "type", "bridge")
	e.ip("link", "set", "foreign0", "up")
	e.ip("addr", "add", "10.97.0.1/24", "dev", "foreign0")
	e.ip("route", "add", "10.99.0.0/16", "via", "10.97.0.254")
	e.ip("rule", "add", "priority", "500", "from", "10.98.0.0/16", "lookup", "50")
	e.exec("iptables", "-N", "FOREIGN")
	e.exec("iptables", "-A", "FOREIGN", "-s", "10.98.0.0/16", "-j", "RETURN")
	e.exec("iptables", "-I", "INPUT", "-j", "FOREIGN")
	view := func() string {
		return e.ip("link", "show", "foreign0") + e.ip("addr", "show", "dev", "foreign0") +
			e.ip("route", "show", "10.99.0.0/16") + e.ip("rule", "show", "priority", "500") +
			e.exec("iptables", "-S", "FOREIGN") + e.exec("iptables", "-S", "INPUT")
	}
	before := view()
	return func() {
		e.t.Helper()
		if after := view(); after != before {
			e.t.Errorf("foreign objects changed:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	}
}

// Applying the gateway example converges (exit 0) and the kernel's own
// tools see every object; applying it again makes zero kernel writes (no
// netlink notification, identical iptables, an empty plan); check, show,
// and graph agree; foreign objects are untouched.
func TestAgentCLIApplyGateway(t *testing.T) {
	e := cliNewEnv(t)
	foreignUntouched := e.placeForeign()

	res := e.mustRun(0, "apply", cliGatewayFile)
	if !strings.Contains(res.stdout, "converged: 18 operations") {
		t.Errorf("apply: %s", res)
	}
	if res.stderr != "" { // warnings and errors only: the numbered list is the output
		t.Errorf("apply at the default log level logged:\n%s", res.stderr)
	}
	e.checkGatewayInKernel()

	// Again: zero kernel writes. settle, not an idle wait: the first
	// apply's links have notifications the kernel holds back (linkwatch).
	w := e.watch()
	w.settle(e)
	before := e.snapshot()
	res = e.mustRun(0, "apply", cliGatewayFile)
	if !strings.Contains(res.stdout, "converged: 0 operations") || strings.Contains(res.stderr, "kernel operation") {
		t.Errorf("second apply ran operations: %s", res)
	}
	if events := w.collect(500 * time.Millisecond); len(events) > 0 {
		t.Errorf("second apply changed the kernel: %d netlink notifications: %v", len(events), events)
	}
	if after := e.snapshot(); after != before {
		t.Errorf("second apply changed the kernel:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if ops := e.planOps(cliGatewayFile); len(ops) != 0 {
		t.Errorf("plan after apply: %v", ops)
	}
	res = e.mustRun(0, "plan", cliGatewayFile)
	if !strings.Contains(res.stdout, "no changes") {
		t.Errorf("plan: %s", res)
	}
	res = e.mustRun(0, "check", cliGatewayFile)
	if !strings.Contains(res.stdout, "ok: running matches intended") {
		t.Errorf("check: %s", res)
	}

	e.checkShow()
	e.checkGraph()
	foreignUntouched()
}

// checkGatewayInKernel looks at the gateway example's objects with ip,
// sysctl and iptables.
func (e *cliEnv) checkGatewayInKernel() {
	t := e.t
	t.Helper()
	br := e.link("br-lan")
	if kind(br) != "bridge" {
		t.Errorf("br-lan: %v", br)
	}
	for name, want := range map[string]string{"lan0": "veth", "vx100": "vxlan", "mv-svc": "macvlan"} {
		l := e.link(name)
		if kind(l) != want {
			t.Errorf("%s is %q, want %s", name, kind(l), want)
		}
	}
	for _, port := range []string{"lan0", "vx100"} {
		if m := e.link(port)["master"]; m != "br-lan" {
			t.Errorf("%s master %v", port, m)
		}
	}
	vx := e.link("vx100")["linkinfo"].(map[string]any)["info_data"].(map[string]any)
	if vx["id"] != 100.0 || vx["port"] != 4789.0 || vx["local"] != "192.0.2.10" || vx["remote"] != "192.0.2.20" {
		t.Errorf("vx100: %v", vx)
	}
	addrs := e.ip("-br", "addr")
	for _, want := range []string{"192.0.2.10/24", "2001:db8::10/64", "192.168.50.1/24", "192.0.2.50/24"} {
		if !strings.Contains(addrs, want) {
			t.Errorf("address %s missing:\n%s", want, addrs)
		}
	}
	if def := e.ipJSON("route", "show", "default"); len(def) != 1 || def[0]["gateway"] != "192.0.2.1" ||
		def[0]["metric"] != 100.0 || def[0]["dev"] != "uplink0" {
		t.Errorf("default route: %v", def)
	}
	if r := e.ipJSON("route", "show", "table", "100"); len(r) != 1 || r[0]["dst"] != "198.51.100.0/24" || r[0]["gateway"] != "192.0.2.254" {
		t.Errorf("table 100: %v", r)
	}
	if r := e.ipJSON("route", "show", "type", "blackhole"); len(r) != 1 || r[0]["dst"] != "203.0.113.0/24" {
		t.Errorf("blackhole: %v", r)
	}
	if r := e.ipJSON("rule", "show", "priority", "1000"); len(r) != 1 || r[0]["src"] != "192.168.50.0" || r[0]["table"] != "100" {
		t.Errorf("rule 1000: %v", r)
	}
	if n := e.ipJSON("neigh", "show", "dev", "br-lan"); len(n) != 1 || n[0]["lladdr"] != "02:00:00:00:00:20" {
		t.Errorf("neighbor: %v", n)
	}
	if v := strings.TrimSpace(e.exec("sysctl", "-n", "net.ipv4.ip_forward")); v != "1" {
		t.Errorf("ip_forward = %s", v)
	}
	filter := e.exec("iptables", "-S")
	if !regexp.MustCompile(`(?m)^-A FORWARD .*-j NETAGENT-FWD$`).MatchString(filter) ||
		!strings.Contains(filter, "-A NETAGENT-FWD -i br-lan -o uplink0 -j ACCEPT") {
		t.Errorf("iptables -S lacks the chain or its jump:\n%s", filter)
	}
	if s := e.exec("iptables", "-t", "nat", "-S"); !strings.Contains(s, "-A NETAGENT-NAT -s 192.168.50.0/24 -o uplink0 -j MASQUERADE") {
		t.Errorf("iptables -t nat -S:\n%s", s)
	}
}

// kind returns the link kind of an `ip -j -d link` entry.
func kind(l map[string]any) string {
	info, _ := l["linkinfo"].(map[string]any)
	k, _ := info["info_kind"].(string)
	return k
}

// checkShow: show prints a readable summary, and show --json a valid
// intent that describes what the kernel holds: applied, it changes
// nothing but pins what the kernel chose (MACs, MTUs).
func (e *cliEnv) checkShow() {
	t := e.t
	t.Helper()
	res := e.mustRun(0, "show")
	for _, want := range []string{"links (not netagent's):", "link uplink0", "interface br-lan bridge",
		"route 0.0.0.0/0 via 192.0.2.1 dev uplink0 table main metric 100", "-A NETAGENT-NAT -s 192.168.50.0/24 -o uplink0 -j MASQUERADE"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, res.stdout)
		}
	}
	res = e.mustRun(0, "show", "--json")
	in, err := intent.Parse([]byte(res.stdout))
	if err != nil {
		t.Fatalf("show --json does not parse: %v\n%s", err, res.stdout)
	}
	if err := in.Validate(); err != nil {
		t.Fatalf("show --json is not a valid intent: %v\n%s", err, res.stdout)
	}
	var names []string
	for _, ifc := range in.Interfaces {
		names = append(names, ifc.Name)
	}
	for _, want := range []string{"br-lan", "lan0", "mv-svc", "uplink0", "vx100", "foreign0"} {
		if !slices.Contains(names, want) {
			t.Errorf("show --json lacks interface %s: %v", want, names)
		}
	}
	if len(in.Routes) != 3 || len(in.Rules) != 1 || len(in.Firewall.Chains) != 2 || in.Sysctls["net.ipv4.ip_forward"] != "1" {
		t.Errorf("show --json: %s", res.stdout)
	}
	shown := e.writeFile("shown.json", res.stdout)
	e.mustRun(0, "validate", shown)
	// What show prints is what the kernel holds: applied, it changes
	// nothing.
	if res := e.mustRun(0, "apply", shown); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("applying show --json: %s", res)
	}
}

// checkGraph: graph and graph --current print DOT that Graphviz renders.
func (e *cliEnv) checkGraph() {
	e.t.Helper()
	for _, args := range [][]string{{cliGatewayFile}, {"--current", cliGatewayFile}, {"--current"}} {
		res := e.mustRun(0, "graph", args...)
		cmd := exec.Command("dot", "-Tsvg")
		cmd.Stdin = strings.NewReader(res.stdout)
		svg, err := cmd.Output()
		if err != nil || !strings.Contains(string(svg), "<svg") {
			e.t.Errorf("graph %v: dot -Tsvg: %v\n%s", args, err, res.stdout)
		}
	}
}

// Editing the intent changes exactly what changed: a route removed and an
// address changed are three operations, and every other object stays (the
// links keep their index). A VXLAN's VNI cannot change in place: the
// interface is recreated with its dependant, the bridge port. (A VLAN id
// change cascades the same way; this host has no 8021q, so that version
// runs in the VM tests of the link configurator.)
func TestAgentCLIEdit(t *testing.T) {
	e := cliNewEnv(t)
	foreignUntouched := e.placeForeign()
	e.mustRun(0, "apply", cliGatewayFile)
	indexes := e.ifindexes()
	uplinkAddrs := e.ip("addr", "show", "dev", "uplink0")

	in := cliGateway(t)
	in.Routes = slices.DeleteFunc(in.Routes, func(r intent.Route) bool { return r.To == "198.51.100.0/24" })
	in.Interfaces[3].Addresses = []string{"192.0.2.51/24"} // mv-svc
	edited := e.writeIntent("edited.json", in)
	wantOps := []string{ // make before break: the new address first
		"create address/mv-svc/192.0.2.51/24",
		"delete address/mv-svc/192.0.2.50/24",
		"delete route/table 100 198.51.100.0/24 metric 0",
	}
	if ops := e.planOps(edited); !slices.Equal(ops, wantOps) {
		t.Errorf("plan of the edit:\n got %q\nwant %q", ops, wantOps)
	}
	w := e.watch() // the control for the zero-writes check: it sees changes
	w.quiesce(time.Second)
	res := e.mustRun(0, "apply", edited)
	if !strings.Contains(res.stdout, "converged: 3 operations") {
		t.Errorf("apply edit: %s", res)
	}
	events := strings.Join(w.collect(500*time.Millisecond), "\n")
	for _, want := range []string{"198.51.100.0/24 table 100", "addr new=false 192.0.2.50/24", "addr new=true 192.0.2.51/24"} {
		if !strings.Contains(events, want) {
			t.Errorf("the netlink watch missed %q:\n%s", want, events)
		}
	}
	if r := e.ipJSON("route", "show", "table", "100"); len(r) != 0 {
		t.Errorf("table 100 still holds %v", r)
	}
	if a := e.ip("-br", "addr", "show", "dev", "mv-svc"); !strings.Contains(a, "192.0.2.51/24") || strings.Contains(a, "192.0.2.50/") {
		t.Errorf("mv-svc: %s", a)
	}
	if got := e.ifindexes(); !mapsEqual(got, indexes) {
		t.Errorf("links were recreated: %v, before %v", got, indexes)
	}
	if got := e.ip("addr", "show", "dev", "uplink0"); got != uplinkAddrs {
		t.Errorf("uplink0's addresses changed:\n%s\nbefore:\n%s", got, uplinkAddrs)
	}

	in.Interfaces[4].VXLAN.VNI = 101 // vx100
	vni := e.writeIntent("vni.json", in)
	// The neighbour on br-lan goes and comes back with the port: a port
	// leaving or joining can change the bridge's MAC, which flushes the
	// bridge's neighbours (issue 7).
	wantOps = []string{
		"delete neighbor/br-lan/192.168.50.20 (recreate)",
		"delete port/vx100 (recreate)",
		"delete interface/vx100 (recreate)",
		"create interface/vx100 (recreate)",
		"create port/vx100 (recreate)",
		"create neighbor/br-lan/192.168.50.20 (recreate)",
	}
	if ops := e.planOps(vni); !slices.Equal(ops, wantOps) {
		t.Errorf("plan of the VNI change:\n got %q\nwant %q", ops, wantOps)
	}
	e.mustRun(0, "apply", vni)
	vx := e.link("vx100")
	if id := vx["linkinfo"].(map[string]any)["info_data"].(map[string]any)["id"]; id != 101.0 || vx["master"] != "br-lan" {
		t.Errorf("vx100 after the VNI change: %v", vx)
	}
	after := e.ifindexes()
	if after["vx100"] == indexes["vx100"] {
		t.Error("vx100 was not recreated")
	}
	delete(after, "vx100")
	delete(indexes, "vx100")
	if !mapsEqual(after, indexes) {
		t.Errorf("other links were recreated: %v, before %v", after, indexes)
	}
	e.mustRun(0, "check", vni)
	foreignUntouched()
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// The plan prints the operations an apply would run, and changes nothing:
// the namespace is identical before and after, and plan --json lists the
// same operations as the text.
func TestAgentCLIPlanChangesNothing(t *testing.T) {
	e := cliNewEnv(t)
	before := e.stableSnapshot()
	res := e.mustRun(0, "plan", cliGatewayFile)
	for _, want := range []string{"1. create address/uplink0/192.0.2.10/24", "create route/main 0.0.0.0/0 metric 100",
		"18. create neighbor/br-lan/192.168.50.20"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, res.stdout)
		}
	}
	if strings.Contains(res.stderr, "kernel operation") {
		t.Errorf("plan logged operations:\n%s", res.stderr)
	}
	ops := e.planOps(cliGatewayFile)
	if len(ops) != 18 || ops[0] != "create address/uplink0/192.0.2.10/24" {
		t.Errorf("plan --json: %q", ops)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(e.mustRun(0, "plan", "--json", cliGatewayFile).stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if after := e.snapshot(); after != before {
		t.Errorf("plan changed the kernel:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if l := e.ipJSON("link", "show"); len(l) != 3 {
		t.Errorf("plan created links: %v", l)
	}
}
