//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// planClashIntent declares, beside objects nothing else holds, one object
// of every kind whose place in the kernel placeClashes gives to someone
// else.
const planClashIntent = `{
  "version": 1,
  "interfaces": [
    {"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24", "2001:db8::10/64", "192.0.2.11/24"]},
    {"name": "br-lan", "type": "bridge", "addresses": ["192.168.50.1/24"]},
    {"name": "p0", "type": "physical", "master": "br-lan"},
    {"name": "mv-svc", "type": "macvlan", "macvlan": {"parent": "uplink0", "mode": "bridge"}, "addresses": ["192.0.2.50/24"]},
    {"name": "v1", "type": "veth", "veth": {"peer": "v1-peer"}},
    {"name": "v2", "type": "veth", "veth": {"peer": "v2-peer"}, "master": "br-lan"}
  ],
  "routes": [
    {"to": "default", "via": "192.0.2.1", "dev": "uplink0", "metric": 100},
    {"to": "203.0.113.0/24", "type": "blackhole"},
    {"to": "198.51.100.0/24", "dev": "uplink0", "table": 100, "metric": 50},
    {"to": "198.51.100.0/24", "dev": "uplink0", "table": 100, "metric": 60},
    {"to": "10.20.0.0/16", "dev": "br-lan"}
  ],
  "rules": [
    {"from": "192.168.50.0/24", "table": 100, "priority": 1000},
    {"from": "192.168.60.0/24", "table": 100, "priority": 1000}
  ],
  "neighbors": [
    {"dev": "uplink0", "ip": "192.0.2.77", "mac": "02:00:00:00:00:77"},
    {"dev": "uplink0", "ip": "192.0.2.78", "mac": "02:00:00:00:00:78"}
  ],
  "firewall": {"chains": [
    {"table": "filter", "name": "NA-FWD", "jumpFrom": "FORWARD", "rules": ["-i br-lan -j ACCEPT"]},
    {"table": "nat", "name": "NA-NAT", "jumpFrom": "POSTROUTING", "rules": ["-s 192.168.50.0/24 -o uplink0 -j MASQUERADE"]}
  ]}
}`

// planClashes are the items of planClashIntent that placeClashes takes
// the place of: each must be predicted to fail, and fail.
var planClashes = []string{
	"address/uplink0/192.0.2.10/24",                   // the same address, another protocol
	"address/uplink0/2001:db8::10/64",                 // the same IPv6 address, another length
	"interface/mv-svc",                                // a foreign link of that name
	"interface/v1",                                    // the veth's peer name is taken
	"iptables-chain/ipv4/filter/NA-FWD",               // an unmarked chain of that name
	"neighbor/uplink0/192.0.2.77",                     // someone's permanent entry
	"port/p0",                                         // enslaved to someone's bridge
	"route/main 203.0.113.0/24 metric 0",              // another protocol's route
	"route/table 100 198.51.100.0/24 metric 50",       // the same key, protocol static
	"rule/ipv4 1000: from 192.168.50.0/24 lookup 100", // the same selectors, another protocol
}

// placeClashes fills the namespace with objects netagent does not own,
// most at the place of an item of planClashIntent, some beside one (which
// must not clash): a learned neighbour entry, an address of another
// length, a route of another metric, a rule of another source, and the
// physical interfaces themselves.
func (e *cliEnv) placeClashes() {
	e.t.Helper()
	e.ip("link", "add", "mv-svc", "type", "bridge")
	e.ip("link", "add", "v1-peer", "type", "bridge")
	e.ip("link", "add", "fbr", "type", "bridge")
	e.ip("link", "add", "p0", "type", "veth", "peer", "name", "p0-peer")
	e.ip("link", "set", "p0", "master", "fbr")
	e.ip("addr", "add", "192.0.2.10/24", "dev", "uplink0")
	e.ip("addr", "add", "192.0.2.11/25", "dev", "uplink0")
	e.ip("addr", "add", "2001:db8::10/128", "dev", "uplink0", "nodad")
	e.ip("route", "add", "blackhole", "203.0.113.0/24")
	e.ip("route", "add", "198.51.100.0/24", "dev", "uplink0", "table", "100", "metric", "50", "proto", "static")
	e.ip("route", "add", "198.51.100.0/24", "dev", "uplink0", "table", "100", "metric", "70", "proto", "static")
	e.ip("rule", "add", "from", "192.168.50.0/24", "table", "100", "priority", "1000")
	e.ip("neigh", "add", "192.0.2.77", "lladdr", "02:00:00:00:01:77", "dev", "uplink0", "nud", "permanent")
	e.ip("neigh", "add", "192.0.2.78", "lladdr", "02:00:00:00:01:78", "dev", "uplink0", "nud", "stale")
	e.exec("iptables", "-N", "NA-FWD")
	e.exec("iptables", "-A", "NA-FWD", "-j", "RETURN")
}

// planDoc is what `plan --json` prints.
type planDoc struct {
	Operations []struct {
		Op, Item, Error string
		Recreate        bool
	}
	Problems []struct {
		Item, State, Reason string
		Blocked             bool
	}
}

// Plan flags every object whose place someone else's object holds as a
// predicted failure (exit 1), with the error apply then fails it with;
// apply runs exactly the planned operations, fails exactly those items,
// and does not wait for link events (nothing waits for a link);
// once the foreign objects are gone, apply converges and plan says "no
// changes" (exit 0).
func TestAgentCLIPlanPredictsClashes(t *testing.T) {
	e := cliNewEnv(t)
	e.placeClashes()
	file := e.writeFile("clash.json", planClashIntent)

	res := e.mustRun(1, "plan", file)
	for _, ref := range planClashes {
		if !strings.Contains(res.stdout, "  !  "+ref+": predicted to fail: ") {
			t.Errorf("plan does not predict that %s fails:\n%s", ref, res.stdout)
		}
	}
	// No item waits for a link: apply will not wait for link events.
	if strings.Contains(res.stdout, "no changes") || strings.Contains(res.stdout, "waits for link events") {
		t.Errorf("plan: %s", res)
	}
	if !strings.Contains(res.stdout, "create interface/mv-svc: creating macvlan mv-svc: link exists and is not owned by netagent") {
		t.Errorf("plan does not show the failing operation with its error:\n%s", res.stdout)
	}

	var doc planDoc
	if err := json.Unmarshal([]byte(e.mustRun(1, "plan", "--json", file).stdout), &doc); err != nil {
		t.Fatal(err)
	}
	predicted, blocked := map[string]string{}, map[string]bool{}
	for _, p := range doc.Problems {
		if p.Blocked {
			blocked[p.Item] = true
			continue
		}
		if p.State != "predicted to fail" {
			t.Errorf("problem %+v", p)
		}
		predicted[p.Item] = p.Reason
	}
	if got := slices.Sorted(maps.Keys(predicted)); !slices.Equal(got, planClashes) {
		t.Errorf("predicted failures:\n got %q\nwant %q", got, planClashes)
	}
	for ref, reason := range predicted {
		if !strings.Contains(reason, "not owned by netagent") {
			t.Errorf("%s: %s", ref, reason)
		}
	}
	var planned []string
	for _, o := range doc.Operations {
		planned = append(planned, o.Op+" "+o.Item)
		if _, clash := predicted[o.Item]; clash != (o.Error != "") {
			t.Errorf("operation %+v", o)
		}
	}
	for _, ref := range []string{"route/main 0.0.0.0/0 metric 100", "address/mv-svc/192.0.2.50/24"} {
		if !blocked[ref] {
			t.Errorf("%s is not blocked behind its failed dependency: %v", ref, blocked)
		}
	}

	// graph --current marks the same items as failing.
	dot := e.mustRun(0, "graph", "--current", file).stdout
	for _, ref := range planClashes {
		if line := graphNode(t, dot, ref); !strings.Contains(line, "peripheries=2") || !strings.Contains(line, "fails: ") {
			t.Errorf("graph --current draws %s, predicted to fail, as %s", ref, line)
		}
	}
	if line := graphNode(t, dot, "interface/br-lan"); strings.Contains(line, "fails") {
		t.Errorf("graph --current: %s", line)
	}
	cmd := exec.Command("dot", "-Tsvg")
	cmd.Stdin = strings.NewReader(dot)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("dot -Tsvg: %v\n%s\n%s", err, out, dot)
	}

	// Nothing here waits for a link (every blocked item is behind a
	// clash), so apply does not wait for link events: it returns long
	// before its wait ends.
	start := time.Now()
	res = e.mustRun(1, "apply", "--log-level", "info", "--wait", "2m", file)
	if took := time.Since(start); took > time.Minute {
		t.Errorf("apply took %v: it waited for link events although no item waits for a link", took)
	}
	failed, applyBlocked := map[string]bool{}, map[string]bool{}
	for _, line := range strings.Split(res.stderr, "\n") {
		if m := problemLine.FindStringSubmatch(line); m != nil {
			if m[2] == "failed" {
				failed[m[1]] = true
			} else {
				applyBlocked[m[1]] = true
			}
		}
	}
	if got := slices.Sorted(maps.Keys(failed)); !slices.Equal(got, planClashes) {
		t.Errorf("apply failed:\n got %q\nwant %q\n%s", got, planClashes, res)
	}
	if !maps.Equal(applyBlocked, blocked) {
		t.Errorf("apply blocked %v, plan said %v", applyBlocked, blocked)
	}
	if ran := appliedOps(res.stderr); !slices.Equal(ran, planned) {
		t.Errorf("apply ran other operations than planned:\n ran %q\nplan %q", ran, planned)
	}

	// Someone removes their objects: the rest converges, and a plan of the
	// converged namespace is empty.
	for _, args := range [][]string{
		{"link", "del", "mv-svc"}, {"link", "del", "v1-peer"}, {"link", "set", "p0", "nomaster"},
		{"addr", "del", "192.0.2.10/24", "dev", "uplink0"}, {"addr", "del", "2001:db8::10/128", "dev", "uplink0"},
		{"route", "del", "blackhole", "203.0.113.0/24"}, {"route", "del", "198.51.100.0/24", "table", "100", "metric", "50"},
		{"rule", "del", "from", "192.168.50.0/24", "table", "100", "priority", "1000"},
		{"neigh", "del", "192.0.2.77", "dev", "uplink0"},
	} {
		e.ip(args...)
	}
	e.exec("iptables", "-F", "NA-FWD")
	e.exec("iptables", "-X", "NA-FWD")
	if res := e.mustRun(0, "plan", file); strings.Contains(res.stdout, "!") || strings.Contains(res.stdout, "no changes") {
		t.Errorf("plan after the foreign objects went: %s", res)
	}
	e.mustRun(0, "apply", file)
	if res := e.mustRun(0, "plan", file); !strings.Contains(res.stdout, "no changes: the kernel already matches the intent") {
		t.Errorf("plan of the converged namespace: %s", res)
	}
}

// problemLine matches apply's report of an item that did not converge.
var problemLine = regexp.MustCompile(`^(\S+/.+?): (failed|blocked): `)

// appliedOps lists the operations apply logged, as "op item".
func appliedOps(stderr string) []string {
	var out []string
	for _, m := range opLine.FindAllStringSubmatch(stderr, -1) {
		out = append(out, m[2]+" "+m[1])
	}
	return out
}

var opLine = regexp.MustCompile(`item="?(.+?)"? op=(\w+) outcome=`)

// planFull returns every operation `plan --json` lists, as "op item",
// with its pass, whatever the exit code; and the side effects.
func (e *cliEnv) planFull(code int, file string) (ops []string, passes []int, doc planDocFull) {
	e.t.Helper()
	res := e.mustRun(code, "plan", "--json", file)
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		e.t.Fatalf("plan --json: %v\n%s", err, res.stdout)
	}
	for _, o := range doc.Operations {
		ops = append(ops, o.Op+" "+o.Item)
		passes = append(passes, o.Pass)
	}
	return ops, passes, doc
}

type planDocFull struct {
	Operations []struct {
		Op, Item, Error string
		Pass            int
	}
	Problems []struct {
		Item, State string
	}
	SideEffects []sideEffectDoc
}

type sideEffectDoc struct {
	Item, Cause, Reason string
	Certain             bool
}

// Where the kernel undoes an intended item as a side effect of a planned
// operation, apply's next pass writes it again, and plan plans that pass:
// apply runs exactly the planned operations, in the planned order, with
// the planned outcome.
//
//   - a global forwarding key written to a new value rewrites the
//     interfaces' keys (pass 2 writes uplink0's back);
//   - a link set down loses its neighbours and IPv6 addresses (pass 2
//     adds them back; a route over a link declared down is refused by
//     validation, so the down intent leaves the route out);
//   - a port leaving a bridge without a MAC of its own may change its MAC
//     and flush its neighbours: plan says so (it cannot know for sure).
func TestAgentCLIPlanFollowUpPass(t *testing.T) {
	e := cliNewEnv(t)
	base := `{"version": 1,
  "interfaces": [
    {"name": "uplink0", "type": "physical"},
    {"name": "v5", "type": "veth", "veth": {"peer": "v5-peer"}, "state": "%s", "addresses": ["10.5.0.1/24", "2001:db8:5::1/64"]},
    {"name": "br0", "type": "bridge", "addresses": ["192.168.50.1/24"]}%s
  ],
  "routes": [%s],
  "neighbors": [
    {"dev": "v5", "ip": "10.5.0.9", "mac": "02:00:00:00:05:09"},
    {"dev": "br0", "ip": "192.168.50.20", "mac": "02:00:00:00:00:20"}
  ],
  "sysctls": {"net.ipv4.conf.all.forwarding": "%s", "net.ipv4.conf.uplink0.forwarding": "1"}
}`
	ports := `,
    {"name": "lan0", "type": "veth", "veth": {"peer": "lan0-peer"}, "master": "br0"},
    {"name": "lan1", "type": "veth", "veth": {"peer": "lan1-peer"}, "master": "br0"}`
	write := func(name, state, ports, fwd string) string {
		route := `{"to": "10.6.0.0/16", "via": "10.5.0.2"}`
		if state == "down" {
			route = ""
		}
		return e.writeFile(name, fmt.Sprintf(base, state, ports, route, fwd))
	}
	e.mustRun(0, "apply", write("start.json", "up", ports, "1"))

	// The forwarding key.
	fwd := write("fwd.json", "up", ports, "0")
	ops, passes, doc := e.planFull(0, fwd)
	want := []string{"modify sysctl/net.ipv4.conf.all.forwarding", "modify sysctl/net.ipv4.conf.uplink0.forwarding"}
	if !slices.Equal(ops, want) || !slices.Equal(passes, []int{1, 2}) {
		t.Errorf("plan of the forwarding change: %q passes %v, want %q in passes 1, 2", ops, passes, want)
	}
	if len(doc.SideEffects) != 1 || !doc.SideEffects[0].Certain || doc.SideEffects[0].Item != "sysctl/net.ipv4.conf.uplink0.forwarding" {
		t.Errorf("side effects: %+v", doc.SideEffects)
	}
	res := e.mustRun(0, "apply", "--log-level", "info", fwd)
	if ran := appliedOps(res.stderr); !slices.Equal(ran, ops) {
		t.Errorf("apply ran %q, plan said %q", ran, ops)
	}
	if got := strings.TrimSpace(e.exec("sysctl", "-n", "net.ipv4.conf.uplink0.forwarding")); got != "1" {
		t.Errorf("uplink0 forwarding is %s", got)
	}
	if res := e.mustRun(0, "plan", fwd); !strings.Contains(res.stdout, "no changes") {
		t.Errorf("plan after apply: %s", res)
	}

	// The link goes down.
	down := write("down.json", "down", ports, "0")
	ops, passes, doc = e.planFull(0, down)
	want = []string{"modify interface/v5", "delete route/main 10.6.0.0/16 metric 0", "create address/v5/2001:db8:5::1/64",
		"create neighbor/v5/10.5.0.9"}
	if !slices.Equal(ops, want) || !slices.Equal(passes, []int{1, 1, 2, 2}) {
		t.Errorf("plan of the link going down: %q passes %v, want %q", ops, passes, want)
	}
	if len(doc.Problems) != 0 {
		t.Errorf("problems: %+v", doc.Problems)
	}
	res = e.mustRun(0, "apply", "--log-level", "info", down)
	if ran := appliedOps(res.stderr); !slices.Equal(ran, ops) {
		t.Errorf("apply ran %q, plan said %q", ran, ops)
	}
	e.mustRun(0, "apply", fwd)

	// A port leaves the bridge.
	leave := write("leave.json", "up", ports[:strings.Index(ports, `,
    {"name": "lan1"`)], "0")
	_, _, doc = e.planFull(0, leave)
	found := false
	for _, s := range doc.SideEffects {
		if s.Item == "neighbor/br0/192.168.50.20" && s.Cause == "delete port/lan1" && !s.Certain {
			found = true
		}
	}
	if !found {
		t.Errorf("plan does not say that br0's neighbour may be flushed: %+v", doc.SideEffects)
	}
	e.mustRun(0, "apply", leave)
	if res := e.mustRun(0, "plan", leave); !strings.Contains(res.stdout, "no changes") {
		t.Errorf("plan after apply: %s", res)
	}
}

// A delete of netagent's address that would take someone else's objects
// with it is refused by apply, and plan predicts it: the last IPv4
// address of an interface that someone's route goes through. (The primary
// address of someone's secondary is deleted with promote_secondaries on:
// the secondary is promoted and stays.) Replacing
// that address by another is not refused when the new one is added first;
// plan follows apply's order either way: apply runs exactly the planned
// operations with the planned outcomes.
func TestAgentCLIPlanPredictsRefusedDeletes(t *testing.T) {
	e := cliNewEnv(t)
	e.exec("sysctl", "-qw", "net.ipv4.conf.all.promote_secondaries=0", "net.ipv4.conf.default.promote_secondaries=0")
	intent := func(name, v8, v9 string) string {
		return e.writeFile(name, fmt.Sprintf(`{"version": 1, "interfaces": [
  {"name": "v8", "type": "veth", "veth": {"peer": "v8-peer"}, "addresses": [%s]},
  {"name": "v9", "type": "veth", "veth": {"peer": "v9-peer"}, "addresses": [%s]}]}`, v8, v9))
	}
	e.mustRun(0, "apply", intent("start.json", `"10.8.0.1/24"`, `"10.9.0.1/24"`))
	e.ip("addr", "add", "10.8.0.2/24", "dev", "v8")
	e.ip("link", "set", "v9", "up")
	e.ip("link", "set", "v9-peer", "up")
	e.ip("route", "add", "10.99.0.0/16", "via", "10.9.0.254", "dev", "v9", "proto", "static")

	// check plans and applies file: plan exits with code and predicts
	// exactly refused (code -1: whatever plan says), and apply runs the
	// planned operations with the planned outcomes.
	check := func(file string, code int, refused []string) int {
		t.Helper()
		anyCode := code < 0
		if anyCode {
			code = e.netagent("plan", file).code
		}
		ops, _, doc := e.planFull(code, file)
		var predicted []string
		for _, p := range doc.Problems {
			if p.State == "predicted to fail" {
				predicted = append(predicted, p.Item)
			}
		}
		if !anyCode && !slices.Equal(predicted, refused) {
			t.Errorf("%s: predicted failures %q, want %q", file, predicted, refused)
		}
		var planned []string
		for i, o := range doc.Operations {
			planned = append(planned, ops[i]+" failed="+fmt.Sprint(o.Error != ""))
		}
		res := e.mustRun(code, "apply", "--log-level", "info", file)
		var ran []string
		for _, m := range opOutcome.FindAllStringSubmatch(res.stderr, -1) {
			ran = append(ran, m[2]+" "+m[1]+" failed="+fmt.Sprint(m[3] == "failed"))
		}
		if !slices.Equal(ran, planned) {
			t.Errorf("%s: apply ran %q\nplan said %q\n%s", file, ran, planned, res)
		}
		for _, ref := range refused {
			if !strings.Contains(res.stderr, ref+": failed: delete failed: deleting address ") || !strings.Contains(res.stderr, "not owned by netagent") {
				t.Errorf("%s: apply does not fail %s: %s", file, ref, res)
			}
		}
		return code
	}
	check(intent("gone.json", "", ""), 1, []string{"address/v9/10.9.0.1/24"})
	if got := e.ip("-br", "-4", "addr", "show", "dev", "v8"); !strings.Contains(got, "10.8.0.2/24") || strings.Contains(got, "10.8.0.1/") {
		t.Errorf("v8: %s", got)
	}
	if got := strings.TrimSpace(e.exec("sysctl", "-n", "net.ipv4.conf.v8.promote_secondaries")); got != "0" {
		t.Errorf("promote_secondaries of v8 left at %s", got)
	}
	// Whether the old address goes before the new one comes is the
	// reconciler's order (make before break, where they can coexist).
	if check(intent("moved.json", `"10.8.0.1/24"`, `"10.9.0.5/24"`), -1, nil) == 0 {
		if got := e.ip("-br", "-4", "addr", "show", "dev", "v9"); !strings.Contains(got, "10.9.0.5/24") || strings.Contains(got, "10.9.0.1/") {
			t.Errorf("v9: %s", got)
		}
	}
	if got := e.ip("route", "show", "10.99.0.0/16"); !strings.Contains(got, "10.99.0.0/16 via 10.9.0.254") {
		t.Errorf("someone's route went: %q", got)
	}
}

var opOutcome = regexp.MustCompile(`item="?(.+?)"? op=(\w+) outcome=(\w+)`)

// Moving an interface's only IPv4 address deletes it before adding the
// new one: the kernel then flushes the IPv4 routes through the interface,
// and apply's follow-up pass adds netagent's back. Plan plans that pass:
// apply runs exactly the planned operations, in order.
func TestAgentCLIPlanFollowUpLastAddress(t *testing.T) {
	e := cliNewEnv(t)
	intent := func(name, addr string) string {
		return e.writeFile(name, fmt.Sprintf(`{"version": 1,
  "interfaces": [{"name": "v9", "type": "veth", "veth": {"peer": "v9-peer"}, "addresses": ["%s"]}],
  "routes": [{"to": "10.77.0.0/16", "dev": "v9"}, {"to": "10.78.0.0/16", "via": "10.9.0.254"}]}`, addr))
	}
	e.mustRun(0, "apply", intent("start.json", "10.9.0.1/24"))
	moved := intent("moved.json", "10.9.0.5/24")
	ops, passes, doc := e.planFull(0, moved)
	res := e.mustRun(0, "apply", "--log-level", "info", moved)
	if ran := appliedOps(res.stderr); !slices.Equal(ran, ops) {
		t.Errorf("apply ran %q\nplan said %q", ran, ops)
	}
	flushed := slices.IndexFunc(doc.SideEffects, func(s sideEffectDoc) bool {
		return s.Item == "route/main 10.77.0.0/16 metric 0" && s.Certain
	})
	if i := slices.Index(ops, "delete address/v9/10.9.0.1/24"); i >= 0 && i < slices.Index(ops, "create address/v9/10.9.0.5/24") {
		// Break before make: the follow-up pass must be planned.
		if flushed < 0 || passes[len(passes)-1] != 2 || ops[len(ops)-1] != "create route/main 10.77.0.0/16 metric 0" {
			t.Errorf("plan %q passes %v, side effects %+v", ops, passes, doc.SideEffects)
		}
	} else if flushed >= 0 {
		t.Errorf("make before break: nothing is flushed, but plan says so: %+v", doc.SideEffects)
	}
	if res := e.mustRun(0, "plan", moved); !strings.Contains(res.stdout, "no changes") {
		t.Errorf("plan after apply: %s", res)
	}
}
