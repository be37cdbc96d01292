package render

import (
	"net/netip"
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// routingFeatures is an intent with every route and rule feature: ECMP
// routes of both families with weights and per-hop onlink, onlink, mtu,
// pref, and rules with every selector and every action.
const routingFeatures = `{"version": 1,
  "interfaces": [{"name": "eth0", "type": "physical", "addresses": ["192.0.2.10/24", "2001:db8::10/64"]},
    {"name": "eth1", "type": "physical", "addresses": ["198.51.100.10/24"]}],
  "routes": [
    {"to": "10.200.0.0/16", "nexthops": [{"via": "192.0.2.2", "dev": "eth0", "weight": 1}, {"via": "198.51.100.2", "weight": 3},
      {"via": "203.0.113.1", "dev": "eth1", "onlink": true}], "mtu": 1400, "table": 100},
    {"to": "2001:db8:9::/48", "pref": "high", "nexthops": [{"via": "2001:db8::1"}, {"via": "fe80::1", "dev": "eth1"}]},
    {"to": "10.201.0.0/16", "via": "203.0.113.9", "dev": "eth1", "onlink": true, "metric": 5},
    {"to": "default", "via": "2001:db8::1", "pref": "low", "mtu": 1280}
  ],
  "rules": [
    {"priority": 10, "not": true, "from": "10.0.0.0/8", "ipproto": "tcp", "sport": "1000-2000", "dport": "443",
      "uidrange": "1000-1999", "suppressPrefixlength": 0, "table": 100},
    {"priority": 11, "family": "ipv6", "ipproto": "58", "action": "unreachable"},
    {"priority": 12, "family": "ipv4", "iif": "eth0", "action": "goto", "goto": 20},
    {"priority": 20, "family": "ipv4", "action": "prohibit"},
    {"priority": 20, "family": "ipv4", "fwmark": 1, "table": 100},
    {"priority": 21, "family": "ipv4", "action": "blackhole", "uidrange": "0", "ipproto": "udp", "dport": "53"}
  ]}`

// ToIntent(Render(x)) renders to the same items as x for every route and
// rule feature.
func TestRoutingFeaturesRoundTrip(t *testing.T) {
	g := mustRender(t, parse(t, routingFeatures))
	back, data := reparse(t, ToIntent(itemsOf(g)))
	if err := back.Validate(); err != nil {
		t.Fatalf("invalid:\n%s\n%s", errorLines(err), data)
	}
	sameItems(t, mustRender(t, back), g)
}

// A multipath route depends on every nexthop's device and on the declared
// address that puts each gateway on-link; it has no carrier link. A goto
// rule depends on the rules it jumps to.
func TestRoutingFeaturesRender(t *testing.T) {
	g := mustRender(t, parse(t, routingFeatures))
	ecmp := &items.Route{Dst: mustPrefix("10.200.0.0/16"), Table: 100}
	it, ok := g.Get(dg.Ref(ecmp))
	if !ok {
		t.Fatalf("no %s in %s", dg.Ref(ecmp), describe(g))
	}
	r := it.(*items.Route)
	want := []items.Nexthop{
		{Gw: netip.MustParseAddr("192.0.2.2"), Dev: "eth0", Weight: 1},
		{Gw: netip.MustParseAddr("198.51.100.2"), Weight: 3},
		{Gw: netip.MustParseAddr("203.0.113.1"), Dev: "eth1", Weight: 1, OnLink: true},
	}
	if !slices.Equal(r.Nexthops, want) || r.MTU != 1400 || r.Gw.IsValid() || r.Dev != "" || r.CarrierLink != "" {
		t.Errorf("ecmp route %s", r)
	}
	var deps []dg.ItemRef
	for _, d := range r.Dependencies() {
		deps = append(deps, d.RequiredItem)
	}
	for _, ref := range []dg.ItemRef{items.InterfaceRef("eth0"), items.InterfaceRef("eth1"),
		items.AddressRef("eth0", mustPrefix("192.0.2.10/24")), items.AddressRef("eth1", mustPrefix("198.51.100.10/24"))} {
		if !slices.Contains(deps, ref) {
			t.Errorf("ecmp route lacks dependency %s: %v", ref, deps)
		}
	}
	v6, _ := g.Get(dg.Ref(&items.Route{Dst: mustPrefix("2001:db8:9::/48")}))
	if r6 := v6.(*items.Route); r6.Pref != items.RoutePrefHigh || len(r6.Nexthops) != 2 || r6.Scope != items.ScopeUniverse {
		t.Errorf("ipv6 ecmp route %s", r6)
	}
	var gotoRule *items.Rule
	for it := range g.Items() {
		if ru, ok := it.(*items.Rule); ok && ru.Action == items.RuleGoto {
			gotoRule = ru
		}
	}
	if gotoRule == nil || len(gotoRule.Deps) != 3 {
		t.Fatalf("goto rule %v: want deps on eth0 and both rules at 20", gotoRule)
	}
	for _, d := range gotoRule.Deps[1:] {
		if d.Type != items.TypeRule {
			t.Errorf("goto dep %s", d)
		}
	}
}
