package netns_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/netagent/netagent/configurators/l3"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// l3SecondUplink adds up1 (a veth to peer1, both up) and the addresses
// that put the gateways of both uplinks on-link (foreign to netagent).
func (e *l3Env) l3SecondUplink() {
	e.ip("link", "add", "up1", "type", "veth", "peer", "name", "peer1")
	e.ip("link", "set", "up1", "up")
	e.ip("link", "set", "peer1", "up")
	e.ip("addr", "add", "10.0.0.2/24", "dev", "up0")
	e.ip("addr", "add", "10.0.1.2/24", "dev", "up1")
	e.ip("addr", "add", "2001:db8::2/64", "dev", "up0", "nodad")
	e.ip("addr", "add", "2001:db8:1::2/64", "dev", "up1", "nodad")
}

// mustShow checks that `ip args...` prints every want (in one line each
// or over the route's nexthop lines).
func (e *l3Env) mustShow(args []string, want ...string) {
	e.t.Helper()
	out := e.ip(args...)
	for _, w := range want {
		if !strings.Contains(out, w) {
			e.t.Errorf("ip %s: no %q in\n%s", strings.Join(args, " "), w, out)
		}
	}
}

func l3EcmpRoute() *items.Route {
	return &items.Route{Dst: l3Prefix("10.200.0.0/16"), Table: 100, Metric: 10, MTU: 1400, Nexthops: []items.Nexthop{
		{Gw: l3Addr("10.0.0.1"), Dev: "up0", Weight: 1},
		{Gw: l3Addr("10.0.1.1"), Weight: 3},
		{Gw: l3Addr("203.0.113.1"), Dev: "up1", Weight: 1, OnLink: true}}}
}

func l3EcmpRoute6() *items.Route {
	return &items.Route{Dst: l3Prefix("2001:db8:9::/48"), Pref: items.RoutePrefHigh, Nexthops: []items.Nexthop{
		{Gw: l3Addr("2001:db8::1"), Weight: 2}, {Gw: l3Addr("2001:db8:1::1"), Dev: "up1"}}}
}

// Multipath routes with weights, onlink, mtu and pref: created as the
// kernel shows them, read back Equal, created again without a kernel
// change, changed in place (weights, mtu, pref, multipath to a plain
// onlink route and back), deleted.
func TestL3RouteMultipathCreateModifyDelete(t *testing.T) {
	e := l3NewEnv(t)
	e.l3SecondUplink()
	ecmp, ecmp6 := l3EcmpRoute(), l3EcmpRoute6()
	onlink := &items.Route{Dst: l3Prefix("10.201.0.0/16"), Gw: l3Addr("192.0.2.9"), Dev: "up0", OnLink: true, MTU: 1300}
	low := &items.Route{Dst: l3Prefix("2001:db8:a::/48"), Gw: l3Addr("2001:db8::1"), Dev: "up0", Pref: items.RoutePrefLow, MTU: 1280}
	routes := []*items.Route{ecmp, ecmp6, onlink, low}
	for _, r := range routes {
		e.create(r)
	}
	e.mustShow([]string{"route", "show", "10.200.0.0/16", "table", "100"}, "proto 211", "metric 10", "mtu 1400",
		"nexthop via 10.0.0.1 dev up0 weight 1", "nexthop via 10.0.1.1 dev up1 weight 3", "nexthop via 203.0.113.1 dev up1 weight 1 onlink")
	e.mustShow([]string{"-6", "route", "show", "2001:db8:9::/48"}, "proto 211", "pref high",
		"nexthop via 2001:db8::1 dev up0 weight 2", "nexthop via 2001:db8:1::1 dev up1 weight 1")
	e.mustShow([]string{"route", "show", "10.201.0.0/16"}, "via 192.0.2.9 dev up0 proto 211 onlink mtu 1300")
	e.mustShow([]string{"-6", "route", "show", "2001:db8:a::/48"}, "mtu 1280", "pref low")
	e.mustReadBack(l3Items(routes)...)

	events := e.l3WatchRoutes()
	for _, r := range routes {
		e.create(r)
		e.modify(r, r)
	}
	events.mustBeQuiet(t, "creating and modifying routes the kernel has as wanted")

	reweighted := l3EcmpRoute()
	reweighted.Nexthops[1].Weight, reweighted.MTU = 7, 1450
	high := *low
	high.Pref, high.MTU = items.RoutePrefHigh, 1400
	single6 := &items.Route{Dst: l3Prefix("2001:db8:9::/48"), Gw: l3Addr("2001:db8::1"), Dev: "up0"}
	back := []*items.Route{reweighted, single6, onlink, &high}
	for i := range routes {
		if items.NeedsRecreate(routes[i], back[i]) {
			t.Errorf("%s needs a recreate", back[i])
		}
		e.modify(routes[i], back[i])
	}
	e.mustShow([]string{"route", "show", "10.200.0.0/16", "table", "100"}, "mtu 1450", "nexthop via 10.0.1.1 dev up1 weight 7")
	e.mustShow([]string{"-6", "route", "show", "2001:db8:9::/48"}, "via 2001:db8::1 dev up0 proto 211")
	e.mustShow([]string{"-6", "route", "show", "2001:db8:a::/48"}, "mtu 1400", "pref high")
	e.mustReadBack(l3Items(back)...)
	// A plain route back to multipath, in place.
	e.modify(single6, ecmp6)
	e.mustShow([]string{"-6", "route", "show", "2001:db8:9::/48"}, "nexthop via 2001:db8::1 dev up0 weight 2")
	back[1] = ecmp6
	e.mustReadBack(l3Items(back)...)
	if n := len(l3Find(e.l3Routes(), "protocol", "211")); n != 4 {
		t.Errorf("%d routes of ours, want 4", n)
	}

	for _, r := range back {
		e.delete(r)
		e.delete(r)
	}
	if got := l3Find(e.l3Routes(), "protocol", "211"); len(got) != 0 {
		t.Errorf("routes of protocol 211 left: %v", got)
	}
	e.mustReadBackNone(items.TypeRoute)
}

// Someone's multipath route (read back where it holds an intended
// route's identity), and a route of ours that no item can describe (a
// tos), are read back as foreign, are clashes, and are never touched.
func TestL3RouteMultipathForeignUntouched(t *testing.T) {
	e := l3NewEnv(t)
	e.l3SecondUplink()
	e.ip("route", "add", "10.200.0.0/16", "table", "100", "metric", "10", "proto", "static",
		"nexthop", "via", "10.0.0.1", "nexthop", "via", "10.0.1.1", "weight", "4")
	e.ip("route", "add", "10.202.0.0/16", "tos", "0x4", "dev", "up0", "proto", "211")
	e.ip("-6", "route", "add", "2001:db8:9::/48", "proto", "static", "nexthop", "via", "2001:db8::1", "nexthop", "via", "2001:db8:1::1")
	before := e.l3Routes()

	ecmp, ecmp6 := l3EcmpRoute(), l3EcmpRoute6()
	for _, r := range []*items.Route{ecmp, ecmp6} {
		l3MustNotOwn(t, "create "+r.Name(), e.cfg(r).Create(e.ctx, r))
		l3MustNotOwn(t, "modify "+r.Name(), e.cfg(r).Modify(e.ctx, r, r))
		l3MustNotOwn(t, "delete "+r.Name(), e.cfg(r).Delete(e.ctx, r))
	}
	clashes, err := l3.Clashes(e.tgt, "", dg.New("intended", ecmp, ecmp6))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*items.Route{ecmp, ecmp6} {
		if !errors.Is(clashes[dg.Ref(r)], l3.ErrNotOwned) {
			t.Errorf("clash of %s: %v", dg.Ref(r), clashes[dg.Ref(r)])
		}
	}
	// others' routes are read back only where they hold an intended
	// route's identity: with ecmp and ecmp6 intended, theirs are
	got := e.readBack(dg.New("intended", ecmp, ecmp6))
	foreign := map[string]bool{}
	for _, it := range got {
		if f, ok := it.(*items.Foreign); ok && f.Kind == items.TypeRoute {
			foreign[fmt.Sprintf("%s owned=%v holds=%s", f.Desc, f.Owned, f.Holds)] = true
		} else if it.Type() == items.TypeRoute {
			t.Errorf("read back %s as ours", it)
		}
	}
	for _, want := range []string{
		"10.200.0.0/16 table 100 metric 10 scope global nexthop via 10.0.0.1 dev up0 weight 1 nexthop via 10.0.1.1 dev up1 weight 4 proto 4 owned=false holds=route/table 100 10.200.0.0/16 metric 10",
		"main 10.202.0.0/16 metric 0 tos 0x4 type 1 dev up0 proto 211 owned=true holds=/",
		"2001:db8:9::/48 table main metric 1024 scope global nexthop via 2001:db8::1 dev up0 weight 1 nexthop via 2001:db8:1::1 dev up1 weight 1 proto 4 owned=false holds=route/main 2001:db8:9::/48 metric 1024",
	} {
		if !foreign[want] {
			t.Errorf("read-back lacks foreign %q: %v", want, foreign)
		}
	}
	if after := e.l3Routes(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("foreign routes changed:\nbefore %v\nafter  %v", before, after)
	}
}

func l3FeatureRules() []*items.Rule {
	zero := uint8(0)
	return []*items.Rule{
		{Priority: 10, Family: items.FamilyIPv4, Invert: true, From: l3Prefix("10.0.0.0/8"), IPProto: 6,
			SPort: items.PortRange{Start: 1000, End: 2000}, DPort: items.PortRange{Start: 443, End: 443},
			UIDs: &items.UIDRange{Start: 1000, End: 1999}, SuppressPrefixlen: &zero, Table: 100},
		{Priority: 12, Family: items.FamilyIPv4, IifName: "up0", Action: items.RuleGoto, Goto: 20},
		{Priority: 20, Family: items.FamilyIPv4, Action: items.RuleProhibit},
		{Priority: 21, Family: items.FamilyIPv6, UIDs: &items.UIDRange{}, IPProto: 17, DPort: items.PortRange{Start: 53, End: 53}, Action: items.RuleBlackhole},
		{Priority: 22, Family: items.FamilyIPv6, IPProto: 58, Action: items.RuleUnreachable},
	}
}

// Rules with every selector and action: shown by ip as written, read
// back Equal, created again without a change, deleted without taking an
// inverted twin that the kernel's delete would match first.
func TestL3RuleSelectorsAndActions(t *testing.T) {
	e := l3NewEnv(t)
	rules := l3FeatureRules()
	for _, r := range rules {
		e.create(r)
	}
	e.mustShow([]string{"rule", "show"},
		"10:\tnot from 10.0.0.0/8 uidrange 1000-1999 ipproto tcp sport 1000-2000 dport 443 lookup 100 suppress_prefixlength 0 proto 211",
		"12:\tfrom all iif up0 goto 20 proto 211", "20:\tfrom all prohibit proto 211")
	e.mustShow([]string{"-6", "rule", "show"}, "21:\tfrom all uidrange 0-0 ipproto udp dport 53 blackhole proto 211",
		"22:\tfrom all ipproto ipv6-icmp unreachable proto 211")
	e.mustReadBack(l3Items(rules)...)
	before := e.l3Rules()
	for _, r := range rules {
		e.create(r)
	}
	if after := e.l3Rules(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("creating again changed the rules:\nbefore %v\nafter  %v", before, after)
	}
	other := *rules[0]
	other.DPort = items.PortRange{Start: 80, End: 80}
	if err := e.cfg(&other).Modify(e.ctx, rules[0], &other); !errors.Is(err, l3.ErrNeedsRecreate) {
		t.Errorf("modify of a selector: %v", err)
	}
	plain := *rules[0]
	plain.Invert = false
	e.create(&plain)
	e.delete(&plain)
	e.mustReadBack(l3Items(rules)...)
	for _, r := range rules {
		e.delete(r)
		e.delete(r)
	}
	if got := l3Find(e.l3Rules(), "protocol", "211"); len(got) != 0 {
		t.Errorf("rules of protocol 211 left: %v", got)
	}
	e.mustReadBackNone(items.TypeRule)
}

// Someone's rules with these selectors are read back as foreign, clash,
// and are never touched; so is a rule of ours that no item describes.
func TestL3RuleSelectorsForeignUntouched(t *testing.T) {
	e := l3NewEnv(t)
	e.ip("rule", "add", "pref", "300", "ipproto", "tcp", "dport", "80-90", "lookup", "100", "proto", "static")
	e.ip("rule", "add", "pref", "301", "not", "uidrange", "0-0", "prohibit")
	e.ip("rule", "add", "pref", "302", "tos", "0x10", "lookup", "100", "proto", "211")
	before := e.l3Rules()
	mine := []*items.Rule{
		{Priority: 300, Family: items.FamilyIPv4, IPProto: 6, DPort: items.PortRange{Start: 80, End: 90}, Table: 100},
		{Priority: 301, Family: items.FamilyIPv4, Invert: true, UIDs: &items.UIDRange{}, Action: items.RuleProhibit},
	}
	for _, r := range mine {
		l3MustNotOwn(t, "create "+r.Name(), e.cfg(r).Create(e.ctx, r))
		l3MustNotOwn(t, "delete "+r.Name(), e.cfg(r).Delete(e.ctx, r))
	}
	clashes, err := l3.Clashes(e.tgt, "", dg.New("intended", l3Items(mine)...))
	if err != nil {
		t.Fatal(err)
	}
	holds := map[dg.ItemRef]bool{}
	owned := 0
	for _, it := range e.readBack(nil) {
		if f, ok := it.(*items.Foreign); ok && f.Kind == items.TypeRule {
			holds[f.Holds] = true
			if f.Owned {
				owned++
			}
		} else if it.Type() == items.TypeRule {
			t.Errorf("read back %s as ours", it)
		}
	}
	for _, r := range mine {
		if !errors.Is(clashes[dg.Ref(r)], l3.ErrNotOwned) {
			t.Errorf("clash of %s: %v", dg.Ref(r), clashes[dg.Ref(r)])
		}
		if !holds[dg.Ref(r)] {
			t.Errorf("no foreign rule read back holding %s: %v", dg.Ref(r), holds)
		}
	}
	if owned != 1 {
		t.Errorf("%d foreign rules marked ours, want the one with a tos", owned)
	}
	if after := e.l3Rules(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("foreign rules changed:\nbefore %v\nafter  %v", before, after)
	}
}
