package items

import (
	"net/netip"
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
)

// A multipath route's nexthops are a set (the kernel keeps them in the
// order given, but the order means nothing), weight 0 is 1, and the
// route depends on every nexthop's device once.
func TestRouteNexthops(t *testing.T) {
	gw := netip.MustParseAddr
	a := &Route{Dst: netip.MustParsePrefix("10.0.0.0/8"), Nexthops: []Nexthop{
		{Gw: gw("192.0.2.1"), Dev: "eth0"}, {Gw: gw("192.0.2.2"), Dev: "eth1", Weight: 3}, {Gw: gw("192.0.2.3"), Dev: "eth0"}}}
	b := &Route{Dst: netip.MustParsePrefix("10.0.0.0/8"), Nexthops: []Nexthop{
		{Gw: gw("192.0.2.3"), Dev: "eth0", Weight: 1}, {Gw: gw("192.0.2.1"), Dev: "eth0"}, {Gw: gw("192.0.2.2"), Dev: "eth1", Weight: 3}}}
	if !a.Equal(b) || !b.Equal(a) || a.Name() != b.Name() {
		t.Errorf("reordered nexthops differ: %s, %s", a, b)
	}
	c := *b
	c.Nexthops = slices.Clone(b.Nexthops)
	c.Nexthops[2].Weight = 4
	if a.Equal(&c) || NeedsRecreate(a, &c) {
		t.Errorf("a weight change: Equal %v, NeedsRecreate %v", a.Equal(&c), NeedsRecreate(a, &c))
	}
	var deps []dg.ItemRef
	for _, d := range a.Dependencies() {
		deps = append(deps, d.RequiredItem)
	}
	if want := []dg.ItemRef{InterfaceRef("eth0"), InterfaceRef("eth1")}; !slices.Equal(deps, want) {
		t.Errorf("dependencies %v, want %v", deps, want)
	}
	if err := a.Validate(); err != nil {
		t.Error(err)
	}
	for name, bad := range map[string]*Route{
		"one nexthop":       {Dst: a.Dst, Nexthops: a.Nexthops[:1]},
		"with a gateway":    {Dst: a.Dst, Gw: gw("192.0.2.9"), Nexthops: a.Nexthops},
		"blackhole":         {Dst: a.Dst, Kind: RouteBlackhole, Nexthops: a.Nexthops},
		"empty nexthop":     {Dst: a.Dst, Nexthops: []Nexthop{{Dev: "eth0"}, {}}},
		"ipv6 gateway":      {Dst: a.Dst, Nexthops: []Nexthop{{Dev: "eth0"}, {Gw: gw("2001:db8::1")}}},
		"weight":            {Dst: a.Dst, Nexthops: []Nexthop{{Dev: "eth0"}, {Dev: "eth1", Weight: 257}}},
		"pref on ipv4":      {Dst: a.Dst, Dev: "eth0", Pref: RoutePrefHigh},
		"onlink without gw": {Dst: a.Dst, Dev: "eth0", OnLink: true},
	} {
		if bad.Validate() == nil {
			t.Errorf("%s: valid", name)
		}
	}
}

// A rule's name holds every selector and the action, so any change is
// another rule; Validate ties the table to lookup and the target to goto.
func TestRuleSelectorsAndActions(t *testing.T) {
	zero := uint8(0)
	r := &Rule{Priority: 10, Family: FamilyIPv4, Invert: true, IPProto: 6, SPort: PortRange{1000, 2000},
		DPort: PortRange{443, 443}, UIDs: &UIDRange{1000, 1999}, SuppressPrefixlen: &zero, Table: 100}
	if got, want := r.Name(), "ipv4 10: not from all uidrange 1000-1999 ipproto tcp sport 1000-2000 dport 443 lookup 100 suppress_prefixlength 0"; got != want {
		t.Errorf("name %q, want %q", got, want)
	}
	if err := r.Validate(); err != nil {
		t.Error(err)
	}
	g := &Rule{Priority: 10, Family: FamilyIPv6, Action: RuleGoto, Goto: 20}
	if g.Name() != "ipv6 10: from all goto 20" || g.Validate() != nil {
		t.Errorf("goto rule %q: %v", g.Name(), g.Validate())
	}
	for name, bad := range map[string]*Rule{
		"lookup without table":   {Priority: 1, Family: FamilyIPv4},
		"blackhole with a table": {Priority: 1, Family: FamilyIPv4, Action: RuleBlackhole, Table: 100},
		"backward goto":          {Priority: 30, Family: FamilyIPv4, Action: RuleGoto, Goto: 20},
		"reversed ports":         {Priority: 1, Family: FamilyIPv4, Table: 1, DPort: PortRange{90, 80}},
		"suppress on goto":       {Priority: 1, Family: FamilyIPv4, Action: RuleGoto, Goto: 2, SuppressPrefixlen: &zero},
	} {
		if bad.Validate() == nil {
			t.Errorf("%s: valid", name)
		}
	}
}

func TestRouteNameAndDependencies(t *testing.T) {
	for _, tc := range []struct {
		r    Route
		name string
		deps int
	}{
		{Route{Dst: netip.MustParsePrefix("10.0.0.0/8"), Metric: 100, Dev: "eth0"}, "main 10.0.0.0/8 metric 100", 1},
		{Route{Dst: netip.MustParsePrefix("2001:db8::/32"), Table: 100}, "table 100 2001:db8::/32 metric 1024", 0},
		{Route{Dst: netip.MustParsePrefix("::ffff:10.0.0.0/104"), Table: TableLocal}, "local ::ffff:10.0.0.0/104 metric 1024", 0},
		{Route{Table: TableDefault}, "default invalid Prefix metric 0", 0},
		{Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), CarrierLink: "eth0", GwAddress: "eth0/10.0.0.1/24",
			Nexthops: []Nexthop{{Dev: "eth1"}, {Dev: "eth0"}, {Dev: "eth1"}, {Dev: "eth2"}}, Dev: "eth0",
			Deps: []dg.ItemRef{AddressRef("eth3", netip.MustParsePrefix("10.1.0.1/24"))}}, "main 0.0.0.0/0 metric 0", 6},
	} {
		if got := tc.r.Name(); got != tc.name {
			t.Errorf("Name() = %q, want %q", got, tc.name)
		}
		deps := tc.r.Dependencies()
		if len(deps) != tc.deps || cap(deps) != tc.deps {
			t.Errorf("%s: %d dependencies (cap %d), want %d: %v", tc.name, len(deps), cap(deps), tc.deps, deps)
		}
	}
}
