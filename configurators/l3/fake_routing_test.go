package l3

import (
	"errors"
	"net"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// ecmpRoute is an IPv4 multipath route over up0 and up1: a weighted
// nexthop whose device the kernel picks, and an onlink one.
func ecmpRoute() *items.Route {
	return &items.Route{Dst: pfx("10.200.0.0/16"), Table: 100, MTU: 1400, Nexthops: []items.Nexthop{
		{Gw: ip("10.0.0.1"), Dev: "up0", Weight: 1},
		{Gw: ip("10.0.0.3"), Weight: 3},
		{Gw: ip("203.0.113.1"), Dev: "up1", Weight: 1, OnLink: true}}}
}

// A multipath route is one kernel route: created with its weights (stored
// less one) and onlink flags, read back Equal, changed in place (weights,
// to a plain onlink route and back, the MTU, an IPv6 preference), deleted.
func TestFakeRouteMultipath(t *testing.T) {
	e := newFakeEnv(t)
	e.withUplink()
	r := ecmpRoute()
	must(t, e.route.Create(ctx, r))
	k := e.ownedRoute(t, r)
	if len(k.MultiPath) != 3 || k.MultiPath[1].Hops != 2 || k.MultiPath[1].LinkIndex != 2 ||
		k.MultiPath[2].Flags&unix.RTNH_F_ONLINK == 0 || k.MTU != 1400 || k.Gw != nil || k.LinkIndex != 0 {
		t.Fatalf("kernel route %+v", k)
	}
	must(t, e.route.Create(ctx, r)) // EEXIST, and ours as wanted: success
	e.ownedRoute(t, r)
	if n := e.writes(func() { must(t, e.route.Modify(ctx, r, r)) }); n != 0 {
		t.Errorf("modify to the same sent %d writes", n)
	}
	readEqual(t, e, r)

	reweighted := ecmpRoute()
	reweighted.Nexthops[0].Weight, reweighted.MTU = 5, 1300
	if items.NeedsRecreate(r, reweighted) {
		t.Error("a weight change needs a recreate")
	}
	if n := e.writes(func() { must(t, e.route.Modify(ctx, r, reweighted)) }); n != 1 {
		t.Errorf("modify sent %d writes, want one replace", n)
	}
	if k := e.ownedRoute(t, r); k.MultiPath[0].Hops != 4 || k.MTU != 1300 {
		t.Errorf("after modify %+v", k)
	}
	readEqual(t, e, reweighted)

	plain := &items.Route{Dst: pfx("10.200.0.0/16"), Table: 100, Gw: ip("203.0.113.9"), Dev: "up0", OnLink: true}
	must(t, e.route.Modify(ctx, reweighted, plain))
	if k := e.ownedRoute(t, r); len(k.MultiPath) != 0 || k.Flags&unix.RTNH_F_ONLINK == 0 {
		t.Errorf("plain onlink route %+v", k)
	}
	readEqual(t, e, plain)
	must(t, e.route.Modify(ctx, plain, r))
	readEqual(t, e, r)

	v6 := &items.Route{Dst: pfx("2001:db8:9::/48"), Pref: items.RoutePrefHigh, Nexthops: []items.Nexthop{
		{Gw: ip("2001:db8::1"), Weight: 2}, {Gw: ip("fe80::1"), Dev: "up1"}}}
	must(t, e.route.Create(ctx, v6))
	readEqual(t, e, v6)
	low := *v6
	low.Pref = items.RoutePrefLow
	if n := e.writes(func() { must(t, e.route.Modify(ctx, v6, &low)) }); n != 1 {
		t.Errorf("pref modify sent %d writes", n)
	}
	readEqual(t, e, &low)

	must(t, e.route.Delete(ctx, r))
	must(t, e.route.Delete(ctx, &low))
	must(t, e.route.Delete(ctx, r))
	if got := e.k.routesWith(items.RouteProtocol); len(got) != 0 {
		t.Errorf("after delete: %+v", got)
	}
}

// The kernel refuses a device-only IPv6 multipath route; the error names
// the route.
func TestFakeRouteMultipathRefused(t *testing.T) {
	e := newFakeEnv(t)
	e.withUplink()
	r := &items.Route{Dst: pfx("2001:db8:9::/48"), Nexthops: []items.Nexthop{{Dev: "up0"}, {Dev: "up1"}}}
	if err := e.route.Create(ctx, r); !errors.Is(err, unix.EINVAL) {
		t.Errorf("create: %v, want EINVAL", err)
	}
}

// Someone's multipath route at the identity of ours is never touched.
func TestFakeRouteMultipathForeign(t *testing.T) {
	e := newFakeEnv(t)
	e.withUplink()
	theirs := netlink.Route{Family: unix.AF_INET, Dst: ipnet("10.200.0.0/16"), Table: 100, Protocol: unix.RTPROT_STATIC,
		MultiPath: []*netlink.NexthopInfo{{LinkIndex: 2, Gw: net.IPv4(10, 0, 0, 1).To4()}, {LinkIndex: 2, Gw: net.IPv4(10, 0, 0, 3).To4()}}}
	e.k.addRoute(theirs)
	r := ecmpRoute()
	wantNotOwned(t, "create", e.route.Create(ctx, r))
	wantNotOwned(t, "modify", e.route.Modify(ctx, r, r))
	wantNotOwned(t, "delete", e.route.Delete(ctx, r))
	got := e.k.routesWith(unix.RTPROT_STATIC)
	if len(got) != 1 || len(got[0].MultiPath) != 2 {
		t.Errorf("their route %+v", got)
	}
	c, err := clashes(e.k, e.k, dg.New("intended", r))
	must(t, err)
	if !errors.Is(c[dg.Ref(r)], ErrNotOwned) {
		t.Errorf("clash: %v", c)
	}
}

// readEqual checks that read-back, hinted with want, holds want.
func readEqual(t *testing.T, e *fakeEnv, want dg.Item) {
	t.Helper()
	got, err := readBack(e.k, dg.New("intended", want))
	must(t, err)
	for _, it := range got {
		if dg.Ref(it) == dg.Ref(want) {
			if !it.Equal(want) {
				t.Errorf("read back %v, want %v", it, want)
			}
			return
		}
	}
	t.Errorf("%s not read back: %v", dg.Ref(want), got)
}

// Rules with every selector and action: created once, read back Equal,
// never modified in place, deleted without taking an inverted twin that
// the kernel's delete would match first.
func TestFakeRuleSelectorsAndActions(t *testing.T) {
	e := newFakeEnv(t)
	zero := uint8(0)
	rules := []*items.Rule{
		{Priority: 10, Family: items.FamilyIPv4, Invert: true, From: pfx("10.0.0.0/8"), IPProto: 6,
			SPort: items.PortRange{Start: 1000, End: 2000}, DPort: items.PortRange{Start: 443, End: 443},
			UIDs: &items.UIDRange{Start: 1000, End: 1999}, SuppressPrefixlen: &zero, Table: 100},
		{Priority: 12, Family: items.FamilyIPv4, IifName: "up0", Action: items.RuleGoto, Goto: 20},
		{Priority: 20, Family: items.FamilyIPv4, Action: items.RuleProhibit},
		{Priority: 21, Family: items.FamilyIPv6, UIDs: &items.UIDRange{}, IPProto: 17, DPort: items.PortRange{Start: 53, End: 53}, Action: items.RuleBlackhole},
		{Priority: 22, Family: items.FamilyIPv6, Action: items.RuleUnreachable},
	}
	for _, r := range rules {
		must(t, e.rule.Create(ctx, r))
		if n := e.writes(func() { must(t, e.rule.Create(ctx, r)) }); n != 0 {
			t.Errorf("%s: second create sent %d writes", r, n)
		}
		readEqual(t, e, r)
	}
	other := *rules[0]
	other.DPort = items.PortRange{Start: 80, End: 80}
	if other.Name() == rules[0].Name() {
		t.Error("a dport change keeps the name")
	}
	if err := e.rule.Modify(ctx, rules[0], &other); !errors.Is(err, ErrNeedsRecreate) {
		t.Errorf("modify of a selector: %v", err)
	}
	if got := ownRules(e.k); len(got) != len(rules) {
		t.Errorf("rules of ours: %+v", got)
	}

	// The same rule without "not", after it: a delete of it would take
	// the inverted one (rule_find does not compare the flag).
	plain := *rules[0]
	plain.Invert = false
	must(t, e.rule.Create(ctx, &plain))
	must(t, e.rule.Delete(ctx, &plain))
	readEqual(t, e, rules[0])
	for _, r := range rules {
		must(t, e.rule.Delete(ctx, r))
		must(t, e.rule.Delete(ctx, r))
	}
	if got := ownRules(e.k); len(got) != 0 {
		t.Errorf("after delete: %+v", got)
	}
	if err := e.rule.Create(ctx, &items.Rule{Priority: 30, Family: items.FamilyIPv4, Action: items.RuleGoto, Goto: 20}); !errors.Is(err, unix.EINVAL) {
		t.Errorf("backward goto: %v, want EINVAL", err)
	}
}

// Someone's rule with ports at the selectors of ours is never touched,
// and is a clash.
func TestFakeRuleSelectorsForeign(t *testing.T) {
	e := newFakeEnv(t)
	theirs := netlink.NewRule()
	theirs.Family, theirs.Priority, theirs.Table, theirs.IPProto, theirs.Protocol = unix.AF_INET, 300, 100, 6, unix.RTPROT_STATIC
	theirs.Dport = netlink.NewRulePortRange(80, 90)
	e.k.addRule(theirs)
	r := &items.Rule{Priority: 300, Family: items.FamilyIPv4, IPProto: 6, DPort: items.PortRange{Start: 80, End: 90}, Table: 100}
	wantNotOwned(t, "create", e.rule.Create(ctx, r))
	wantNotOwned(t, "delete", e.rule.Delete(ctx, r))
	c, err := clashes(e.k, e.k, dg.New("intended", r))
	must(t, err)
	if !errors.Is(c[dg.Ref(r)], ErrNotOwned) {
		t.Errorf("clash: %v", c)
	}
	got, err := readBack(e.k, nil)
	must(t, err)
	if len(got) != 1 || got[0].(*items.Foreign).Holds != dg.Ref(r) {
		t.Errorf("read back %v, want their rule as foreign", got)
	}
}

// Through the reconciler: the new kinds of route and rule converge, a
// second run writes nothing, a weight and a preference change in place,
// a selector change replaces the rule, and foreign objects stay.
func TestFakeReconcileRouting(t *testing.T) {
	e := newFakeEnv(t)
	e.withUplink()
	e.k.addRoute(netlink.Route{Family: unix.AF_INET, Dst: ipnet("10.201.0.0/16"), Protocol: unix.RTPROT_STATIC,
		MultiPath: []*netlink.NexthopInfo{{LinkIndex: 2, Gw: net.IPv4(10, 0, 0, 1).To4()}, {LinkIndex: 3}}})
	theirs := netlink.NewRule()
	theirs.Family, theirs.Priority, theirs.Table, theirs.UIDRange, theirs.Protocol = unix.AF_INET, 5, 100, netlink.NewRuleUIDRange(0, 0), unix.RTPROT_STATIC
	e.k.addRule(theirs)
	v6 := &items.Route{Dst: pfx("2001:db8:9::/48"), Pref: items.RoutePrefHigh, MTU: 1400,
		Nexthops: []items.Nexthop{{Gw: ip("2001:db8::1"), Weight: 2}, {Gw: ip("2001:db8::3")}}}
	target := &items.Rule{Priority: 20, Family: items.FamilyIPv4, Action: items.RuleProhibit}
	jump := &items.Rule{Priority: 12, Family: items.FamilyIPv4, DPort: items.PortRange{Start: 22, End: 22}, IPProto: 6,
		Action: items.RuleGoto, Goto: 20, Deps: []dg.ItemRef{dg.Ref(target)}}
	// The interfaces exist already (their configurator, package link's,
	// must not be called).
	ifs := []dg.Item{&items.Interface{IfName: "up0", Kind: items.KindBridge}, &items.Interface{IfName: "up1", Kind: items.KindBridge}}
	must(t, e.reg.Register(items.TypeInterface, noCalls{t}))
	want := []dg.Item{ecmpRoute(), v6, target, jump}
	run := func(want []dg.Item) {
		t.Helper()
		cur, err := readBack(e.k, dg.New("intended", want...))
		must(t, err)
		st := reconciler.New(e.reg).Reconcile(ctx, dg.New("current", append(cur, ifs...)...), dg.New("intended", append(want, ifs...)...))
		if st.Err != nil || len(st.Blocked) > 0 {
			t.Fatalf("reconcile: %v, blocked %v", st.Err, st.Blocked)
		}
	}
	run(want)
	if n := e.writes(func() { run(want) }); n != 0 {
		t.Errorf("second reconcile sent %d writes, want 0", n)
	}
	for _, w := range want {
		readEqual(t, e, w)
	}

	v6b := *v6
	v6b.Pref, v6b.Nexthops = items.RoutePrefLow, []items.Nexthop{{Gw: ip("2001:db8::1"), Weight: 7}, {Gw: ip("2001:db8::3")}}
	jumpb := *jump
	jumpb.DPort = items.PortRange{Start: 22, End: 23}
	want2 := []dg.Item{ecmpRoute(), &v6b, target, &jumpb}
	if n := e.writes(func() { run(want2) }); n != 3 {
		t.Errorf("changes sent %d writes, want 3 (a replace, a rule delete, a rule add)", n)
	}
	for _, w := range want2 {
		readEqual(t, e, w)
	}
	if got := ownRules(e.k); len(got) != 2 {
		t.Errorf("rules of ours %+v", got)
	}
	if got := e.k.routesWith(unix.RTPROT_STATIC); len(got) != 1 {
		t.Errorf("their routes %+v", got)
	}
	list, _ := e.k.RuleList(netlink.FAMILY_V4)
	if list[1].Priority != 5 || list[1].Protocol != unix.RTPROT_STATIC {
		t.Errorf("their rule: %+v", list)
	}
	run(nil)
	if got := e.k.routesWith(items.RouteProtocol); len(got) != 0 || len(ownRules(e.k)) != 0 {
		t.Errorf("after removing everything: %+v %+v", got, ownRules(e.k))
	}
}

// A multipath route's dependencies on the addresses that put its gateways
// on-link read back as rendered (they are anchored like a gateway's), so
// that read-back is Equal to what was applied.
func TestFakeRouteMultipathAddressDeps(t *testing.T) {
	e := newFakeEnv(t)
	a0 := &items.Address{Dev: "up0", Prefix: pfx("10.0.0.2/24")}
	a1 := &items.Address{Dev: "up1", Prefix: pfx("10.0.1.2/24")}
	r := &items.Route{Dst: pfx("10.200.0.0/16"), Nexthops: []items.Nexthop{{Gw: ip("10.0.0.1"), Dev: "up0"}, {Gw: ip("10.0.1.1")}},
		Deps: []dg.ItemRef{dg.Ref(a0), dg.Ref(a1)}}
	for _, it := range []dg.Item{a0, a1, r} {
		must(t, e.reg.Configurator(it).Create(ctx, it))
	}
	got, err := readBack(e.k, dg.New("intended", a0, a1, r))
	must(t, err)
	for _, it := range got {
		if dg.Ref(it) == dg.Ref(r) && !it.Equal(r) {
			t.Errorf("read back %v deps %v, want deps %v", it, it.(*items.Route).Deps, r.Deps)
		}
	}
}
