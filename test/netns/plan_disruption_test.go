//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
)

// disruptionBase is the intent each case of TestPlanDisruptionMatchesKernel
// starts from: two bridges with a NIC (p1, p2: veth ends netagent does not
// own, up, their peers up) each, a veth with two addresses, a vxlan with an
// address and a route through it, a default route, a route through a
// gateway on the veth, and a chain.
const disruptionBase = `{"version": 1,
  "interfaces": [
    {"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]},
    {"name": "br1", "type": "bridge", "bridge": {"stp": false}, "addresses": ["10.1.0.1/24"]},
    {"name": "br2", "type": "bridge", "bridge": {"stp": false}, "addresses": ["10.2.0.1/24"]},
    {"name": "p1", "type": "physical", "master": "br1"},
    {"name": "p2", "type": "physical", "master": "br2"},
    {"name": "v3", "type": "veth", "veth": {"peer": "v3-peer"}, "addresses": ["10.3.0.1/24", "10.4.0.1/24"]},
    {"name": "vx1", "type": "vxlan", "vxlan": {"vni": 100, "local": "192.0.2.10", "remote": "192.0.2.20", "port": 4789}, "addresses": ["10.9.0.1/24"]}
  ],
  "routes": [
    {"to": "default", "via": "192.0.2.1", "dev": "uplink0", "metric": 100},
    {"to": "198.51.100.0/24", "via": "10.4.0.254"},
    {"to": "10.99.0.0/16", "via": "10.9.0.254"}
  ],
  "firewall": {"chains": [{"table": "filter", "name": "NA-FWD", "jumpFrom": "FORWARD", "rules": ["-i br1 -j ACCEPT"]}]}
}`

// disruptionCase is one change of disruptionBase and what the plan must
// say of it: the effect of some of its operations, the links that go down
// (with their effect), and the IPv4 routes of the main table withdrawn
// (by destination). The kernel must then do exactly that.
type disruptionCase struct {
	name      string
	edit      func(in map[string]any)
	effects   map[string]string // "op item" -> effect
	linksDown map[string]string // link -> effect
	routes    []string
}

var disruptionCases = []disruptionCase{
	{
		name: "mtu in place on a bridge and a veth",
		edit: func(in map[string]any) {
			ifaceOf(in, "br1")["mtu"] = 1400
			ifaceOf(in, "v3")["mtu"] = 1400
		},
		effects:   map[string]string{"modify interface/br1": "none", "modify interface/v3": "none"},
		linksDown: map[string]string{},
	},
	{
		name: "vxlan vni recreates the link and what is on it",
		edit: func(in map[string]any) {
			ifaceOf(in, "vx1")["vxlan"].(map[string]any)["vni"] = 200
		},
		effects: map[string]string{"delete interface/vx1": "recreate", "create interface/vx1": "recreate",
			"delete route/main 10.99.0.0/16 metric 0": "withdrawn", "delete address/vx1/10.9.0.1/24": "withdrawn"},
		linksDown: map[string]string{"vx1": "recreate"},
		routes:    []string{"10.9.0.0/24", "10.99.0.0/16"},
	},
	{
		name: "bridge port moved to another bridge",
		edit: func(in map[string]any) {
			ifaceOf(in, "p2")["master"] = "br1"
		},
		// p2 itself stays up; br2 loses its only port, and its carrier.
		effects:   map[string]string{"modify port/p2": "down"},
		linksDown: map[string]string{"br2": "down"},
	},
	{
		name: "address removed withdraws its subnet route",
		edit: func(in map[string]any) {
			ifaceOf(in, "v3")["addresses"] = []any{"10.3.0.1/24"}
		},
		effects:   map[string]string{"delete address/v3/10.4.0.1/24": "removed"},
		linksDown: map[string]string{},
		// The kernel keeps 198.51.100.0/24 via 10.4.0.254.
		routes: []string{"10.4.0.0/24"},
	},
	{
		name: "veth set down takes its peer's carrier and its routes",
		edit: func(in map[string]any) {
			ifaceOf(in, "v3")["state"] = "down"
			in["routes"] = slices.Delete(in["routes"].([]any), 1, 2) // via 10.4.0.254: not over a link that is down
		},
		effects: map[string]string{"modify interface/v3": "down", "delete route/main 198.51.100.0/24 metric 0": "removed"},
		// The kernel flushes the IPv4 routes through v3 (the subnet
		// routes come back when it is up again).
		linksDown: map[string]string{"v3": "down", "v3-peer": "down"},
		routes:    []string{"10.3.0.0/24", "10.4.0.0/24", "198.51.100.0/24"},
	},
	{
		name: "route gateway change is a replace",
		edit: func(in map[string]any) {
			in["routes"].([]any)[0].(map[string]any)["via"] = "192.0.2.2"
		},
		effects:   map[string]string{"modify route/main 0.0.0.0/0 metric 100": "atomic"},
		linksDown: map[string]string{},
	},
	{
		name: "chain rewritten atomically",
		edit: func(in map[string]any) {
			chain := in["firewall"].(map[string]any)["chains"].([]any)[0].(map[string]any)
			chain["rules"] = []any{"-i br1 -j ACCEPT", "-i br2 -j DROP"}
		},
		effects:   map[string]string{"modify iptables-chain/ipv4/filter/NA-FWD": "atomic"},
		linksDown: map[string]string{},
	},
}

// TestPlanDisruptionMatchesKernel checks, for each change, the disruption
// `plan --json` predicts against what the kernel does during the apply, as
// a netlink monitor in the namespace sees it: the links that go down (lose
// IFF_UP or IFF_LOWER_UP) or are deleted are exactly the links the plan
// says go down, those recreated are exactly those whose ifindex changed,
// and the IPv4 routes of the main table deleted (notified, or gone after
// the apply: the kernel does not notify those it flushes when a link goes
// down) are exactly those it says are withdrawn. A chain said to be replaced atomically is never seen
// half-written by iptables-save running throughout the apply.
func TestPlanDisruptionMatchesKernel(t *testing.T) {
	for _, c := range disruptionCases {
		t.Run(c.name, func(t *testing.T) {
			e := cliNewEnv(t)
			for _, p := range []string{"p1", "p2"} {
				e.ip("link", "add", p, "type", "veth", "peer", "name", p+"-peer")
				e.ip("link", "set", p, "up")
				e.ip("link", "set", p+"-peer", "up")
			}
			e.mustRun(0, "apply", e.writeFile("a.json", disruptionBase))
			e.ip("link", "set", "v3-peer", "up")
			var in map[string]any
			if err := json.Unmarshal([]byte(disruptionBase), &in); err != nil {
				t.Fatal(err)
			}
			c.edit(in)
			data, _ := json.Marshal(in)
			b := e.writeFile("b.json", string(data))

			plan := e.planDisruption(b)
			for op, want := range c.effects {
				if got, ok := plan.effects[op]; !ok || got != want {
					t.Errorf("plan: %s: effect %q, want %q\nall: %v", op, got, want, plan.effects)
				}
			}
			if !maps.Equal(plan.linksDown, c.linksDown) {
				t.Errorf("plan: links down %v, want %v", plan.linksDown, c.linksDown)
			}
			if !slices.Equal(plan.routes, sorted(c.routes)) {
				t.Errorf("plan: routes withdrawn %v, want %v", plan.routes, c.routes)
			}

			before := e.ifindexes()
			routesBefore := mainIPv4Routes(t, e.tgt)
			mon := monitorKernel(t, e.tgt)
			stop := e.watchChain("NA-FWD", plan.atomicChain)
			e.mustRun(0, "apply", b)
			if bad := stop(); bad != "" {
				t.Errorf("a chain predicted to be replaced atomically was seen half-written:\n%s", bad)
			}
			seen := mon.until(t, e.tgt)
			after := e.ifindexes()
			// The kernel does not notify the IPv4 routes it flushes when a
			// link goes down: those are the ones gone after the apply.
			routesAfter := mainIPv4Routes(t, e.tgt)
			for _, r := range routesBefore {
				if !slices.Contains(routesAfter, r) {
					seen.routesDeleted = append(seen.routesDeleted, r)
				}
			}

			var recreated []string
			for name, idx := range before {
				if n, ok := after[name]; ok && n != idx {
					recreated = append(recreated, name)
				}
			}
			var predictedRecreate []string
			for l, eff := range plan.linksDown {
				if eff == "recreate" {
					predictedRecreate = append(predictedRecreate, l)
				}
			}
			if !slices.Equal(sorted(recreated), sorted(predictedRecreate)) {
				t.Errorf("kernel: ifindex changed for %v; the plan predicted recreates of %v", recreated, predictedRecreate)
			}
			if down := slices.Sorted(maps.Keys(seen.down)); !slices.Equal(down, slices.Sorted(maps.Keys(plan.linksDown))) {
				t.Errorf("kernel: links that went down or away %v; the plan predicted %v", down, plan.linksDown)
			}
			if got := sorted(seen.routesDeleted); !slices.Equal(got, plan.routes) {
				t.Errorf("kernel: IPv4 main routes deleted %v; the plan predicted %v", got, plan.routes)
			}
		})
	}
}

// ifaceOf returns the interface of the intent named name.
func ifaceOf(in map[string]any, name string) map[string]any {
	for _, i := range in["interfaces"].([]any) {
		if m := i.(map[string]any); m["name"] == name {
			return m
		}
	}
	panic("no interface " + name)
}

// plannedDisruption is what `plan --json` predicts: the effect of each
// operation ("op item"), the links that go down with their effect (only
// the certain ones), the IPv4 destinations of the main table withdrawn,
// and whether the chain's modify is atomic.
type plannedDisruption struct {
	effects     map[string]string
	linksDown   map[string]string
	routes      []string
	atomicChain bool
}

func (e *cliEnv) planDisruption(file string) plannedDisruption {
	e.t.Helper()
	res := e.mustRun(0, "plan", "--json", file)
	var doc struct {
		Disruption struct {
			LinksDown []struct {
				Link, Effect string
				Certain      bool
			}
			RoutesWithdrawn []struct{ Route, Effect string }
		}
		Operations []struct {
			Op, Item   string
			Disruption struct{ Effect string }
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		e.t.Fatalf("plan --json: %v\n%s", err, res.stdout)
	}
	p := plannedDisruption{effects: map[string]string{}, linksDown: map[string]string{}}
	for _, o := range doc.Operations {
		p.effects[o.Op+" "+o.Item] = o.Disruption.Effect
		if o.Item == "iptables-chain/ipv4/filter/NA-FWD" && o.Disruption.Effect == "atomic" {
			p.atomicChain = true
		}
	}
	for _, l := range doc.Disruption.LinksDown {
		if l.Certain {
			p.linksDown[l.Link] = l.Effect
		}
	}
	for _, r := range doc.Disruption.RoutesWithdrawn {
		if dst, ok := mainIPv4Dst(r.Route); ok {
			p.routes = append(p.routes, dst)
		}
	}
	p.routes = sorted(p.routes)
	return p
}

// watchChain runs iptables-save in the namespace over and over until the
// returned stop is called, and reports (from stop) a snapshot in which the
// chain, its rules or its jump from FORWARD are missing or half-written:
// with atomic, the chain must always be whole, the old rules or the new.
func (e *cliEnv) watchChain(chain string, atomic bool) (stop func() string) {
	if !atomic {
		return func() string { return "" }
	}
	old := []string{"-A " + chain + " -i br1 -j ACCEPT"}
	new := append(slices.Clone(old), "-A "+chain+" -i br2 -j DROP")
	jump := "-A FORWARD -j " + chain
	// netagent's mark: a comment on the jump, and a first rule with only
	// the comment.
	const mark = " -m comment --comment netagent"
	var (
		mu   sync.Mutex
		bad  string
		quit = make(chan struct{})
		done = make(chan struct{})
	)
	snap := func() {
		out, err := exec.Command("ip", "netns", "exec", e.tgt.Name, "iptables-save", "-t", "filter").Output()
		if err != nil {
			return // the xtables lock held by the apply: try again
		}
		var rules []string
		hasJump := false
		for _, line := range strings.Split(string(out), "\n") {
			line = strings.Replace(line, mark, "", 1)
			if strings.HasPrefix(line, "-A "+chain+" ") {
				rules = append(rules, line)
			}
			hasJump = hasJump || line == jump
		}
		mu.Lock()
		defer mu.Unlock()
		if bad == "" && (!hasJump || !slices.Equal(rules, old) && !slices.Equal(rules, new)) {
			bad = string(out)
		}
	}
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			default:
				snap()
			}
		}
	}()
	return func() string {
		close(quit)
		<-done
		snap() // at least one, after the apply
		mu.Lock()
		defer mu.Unlock()
		return bad
	}
}
