package netns_test

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink"
)

// l3Uplink gives up0 the addresses that put the gateways on-link (placed
// with ip: foreign to netagent, and untouched by every test).
func (e *l3Env) l3Uplink() {
	e.ip("addr", "add", "10.0.0.2/24", "dev", "up0")
	e.ip("addr", "add", "10.0.0.3/24", "dev", "up0")
	e.ip("addr", "add", "2001:db8::2/64", "dev", "up0", "nodad")
	e.ip("addr", "add", "2001:db8::3/64", "dev", "up0", "nodad")
}

// l3Routes returns `ip -j route show table all` of both families.
func (e *l3Env) l3Routes() []map[string]any {
	return append(e.ipJSON("-4", "route", "show", "table", "all"), e.ipJSON("-6", "route", "show", "table", "all")...)
}

// mustRoute checks that `ip` shows exactly one route with these fields.
func (e *l3Env) mustRoute(kv ...string) {
	e.t.Helper()
	if got := l3Find(e.l3Routes(), kv...); len(got) != 1 {
		e.t.Errorf("ip route: %d routes with %v, want 1", len(got), kv)
	}
}

// mustNoRoute checks that `ip` shows no route with these fields.
func (e *l3Env) mustNoRoute(kv ...string) {
	e.t.Helper()
	if got := l3Find(e.l3Routes(), kv...); len(got) != 0 {
		e.t.Errorf("ip route: %d routes with %v, want none: %v", len(got), kv, got)
	}
}

// l3RouteSamples are routes of every kind the configurator manages.
func l3RouteSamples() []*items.Route {
	return []*items.Route{
		{Dst: l3Prefix("0.0.0.0/0"), Gw: l3Addr("10.0.0.1"), Dev: "up0", Metric: 100},
		{Dst: l3Prefix("192.0.2.0/24"), Gw: l3Addr("10.0.0.1"), Table: 100},
		{Dst: l3Prefix("198.51.100.0/24"), Kind: items.RouteBlackhole},
		{Dst: l3Prefix("198.51.101.0/24"), Kind: items.RouteUnreachable, Metric: 10},
		{Dst: l3Prefix("198.51.102.0/24"), Kind: items.RouteProhibit, Table: 100},
		{Dst: l3Prefix("203.0.113.0/24"), Dev: "up0", Scope: items.ScopeLink, Src: l3Addr("10.0.0.2")},
		{Dst: l3Prefix("2001:db8:100::/48"), Gw: l3Addr("2001:db8::1"), Dev: "up0"},
		{Dst: l3Prefix("::/0"), Gw: l3Addr("2001:db8::1"), Metric: 200},
		{Dst: l3Prefix("2001:db8:200::/48"), Kind: items.RouteBlackhole, Table: 100},
		{Dst: l3Prefix("2001:db8:201::/48"), Kind: items.RouteUnreachable},
		{Dst: l3Prefix("2001:db8:202::/48"), Kind: items.RouteProhibit, Metric: 7},
	}
}

func l3Items[T dg.Item](list []T) []dg.Item {
	out := make([]dg.Item, len(list))
	for i, x := range list {
		out[i] = x
	}
	return out
}

// The `ip -j route` fields each sample must show.
var l3RouteSampleFields = [][]string{
	{"dst", "default", "gateway", "10.0.0.1", "dev", "up0", "metric", "100", "protocol", "211"},
	{"dst", "192.0.2.0/24", "gateway", "10.0.0.1", "table", "100", "protocol", "211"},
	{"dst", "198.51.100.0/24", "type", "blackhole", "protocol", "211"},
	{"dst", "198.51.101.0/24", "type", "unreachable", "metric", "10", "protocol", "211"},
	{"dst", "198.51.102.0/24", "type", "prohibit", "table", "100", "protocol", "211"},
	{"dst", "203.0.113.0/24", "dev", "up0", "scope", "link", "prefsrc", "10.0.0.2", "protocol", "211"},
	{"dst", "2001:db8:100::/48", "gateway", "2001:db8::1", "dev", "up0", "metric", "1024", "protocol", "211"},
	{"dst", "default", "gateway", "2001:db8::1", "metric", "200", "protocol", "211"},
	{"dst", "2001:db8:200::/48", "type", "blackhole", "table", "100", "protocol", "211"},
	{"dst", "2001:db8:201::/48", "type", "unreachable", "protocol", "211"},
	{"dst", "2001:db8:202::/48", "type", "prohibit", "metric", "7", "protocol", "211"},
}

func TestL3RouteCreateModifyDelete(t *testing.T) {
	e := l3NewEnv(t)
	e.l3Uplink()
	routes := l3RouteSamples()

	for _, r := range routes {
		e.create(r)
	}
	for _, f := range l3RouteSampleFields {
		e.mustRoute(f...)
	}
	e.mustReadBack(l3Items(routes)...)

	// Do it twice: nothing changes, nothing is written.
	events := e.l3WatchRoutes()
	for _, r := range routes {
		e.create(r)
	}
	events.mustBeQuiet(t, "creating existing routes again")
	e.mustReadBack(l3Items(routes)...)

	// Modify in place: a new gateway, a new preferred source, a new
	// gateway of an IPv6 route, a blackhole turned into a unicast route.
	mods := map[int]*items.Route{
		0: {Dst: l3Prefix("0.0.0.0/0"), Gw: l3Addr("10.0.0.254"), Dev: "up0", Metric: 100},
		5: {Dst: l3Prefix("203.0.113.0/24"), Dev: "up0", Scope: items.ScopeLink, Src: l3Addr("10.0.0.3")},
		6: {Dst: l3Prefix("2001:db8:100::/48"), Gw: l3Addr("2001:db8::fe"), Dev: "up0"},
		2: {Dst: l3Prefix("198.51.100.0/24"), Gw: l3Addr("10.0.0.1")},
	}
	for i, n := range mods {
		e.modify(routes[i], n)
		routes[i] = n
	}
	e.mustRoute("dst", "default", "gateway", "10.0.0.254", "metric", "100", "protocol", "211")
	e.mustNoRoute("dst", "default", "gateway", "10.0.0.1", "metric", "100")
	e.mustRoute("dst", "203.0.113.0/24", "prefsrc", "10.0.0.3", "protocol", "211")
	e.mustRoute("dst", "2001:db8:100::/48", "gateway", "2001:db8::fe", "protocol", "211")
	e.mustNoRoute("dst", "2001:db8:100::/48", "gateway", "2001:db8::1")
	e.mustRoute("dst", "198.51.100.0/24", "gateway", "10.0.0.1", "protocol", "211")
	e.mustNoRoute("dst", "198.51.100.0/24", "type", "blackhole")
	e.mustReadBack(l3Items(routes)...)

	// Modify when the kernel already matches (a stale current state): no
	// kernel write.
	events = e.l3WatchRoutes()
	e.modify(l3RouteSamples()[0], routes[0])
	events.mustBeQuiet(t, "modifying a route the kernel already has as wanted")

	for _, r := range routes {
		e.delete(r)
	}
	for _, r := range routes {
		e.delete(r) // twice: already gone
	}
	if got := l3Find(e.l3Routes(), "protocol", "211"); len(got) != 0 {
		t.Errorf("routes of protocol 211 left: %v", got)
	}
	e.mustReadBackNone(items.TypeRoute)
	// The kernel's own routes (the uplink's subnets) are still there.
	e.mustRoute("dst", "10.0.0.0/24", "dev", "up0", "protocol", "kernel")
}

func TestL3RouteForeignUntouched(t *testing.T) {
	e := l3NewEnv(t)
	e.l3Uplink()
	e.ip("route", "add", "192.0.2.0/24", "via", "10.0.0.1", "metric", "50")
	e.ip("route", "add", "198.18.0.0/15", "dev", "up0", "table", "100", "proto", "static")
	e.ip("-6", "route", "add", "2001:db8:300::/48", "via", "2001:db8::1")
	before := e.l3Routes()

	clashes := []*items.Route{
		{Dst: l3Prefix("192.0.2.0/24"), Gw: l3Addr("10.0.0.9"), Metric: 50},
		{Dst: l3Prefix("198.18.0.0/15"), Kind: items.RouteBlackhole, Table: 100},
		{Dst: l3Prefix("2001:db8:300::/48"), Gw: l3Addr("2001:db8::9")},
	}
	for _, r := range clashes {
		l3MustNotOwn(t, "create "+r.Name(), e.cfg(r).Create(e.ctx, r))
		l3MustNotOwn(t, "modify "+r.Name(), e.cfg(r).Modify(e.ctx, r, r))
		l3MustNotOwn(t, "delete "+r.Name(), e.cfg(r).Delete(e.ctx, r))
	}
	// Routes of ours beside them: same destination, another metric.
	ours := []*items.Route{
		{Dst: l3Prefix("192.0.2.0/24"), Gw: l3Addr("10.0.0.1"), Metric: 60},
		{Dst: l3Prefix("2001:db8:300::/48"), Gw: l3Addr("2001:db8::1"), Metric: 5},
	}
	for _, r := range ours {
		e.create(r)
	}
	e.mustReadBack(l3Items(ours)...)
	for _, r := range ours {
		e.delete(r)
	}
	e.mustReadBackNone(items.TypeRoute)
	if after := e.l3Routes(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("foreign routes changed:\nbefore %v\nafter  %v", before, after)
	}
}

// The kernel reads metric 0 in an IPv4 delete as "any metric": deleting
// our metric-0 route when it is gone must not take our metric-100 route
// of the same destination.
func TestL3RouteMetricZeroDeleteKeepsOthers(t *testing.T) {
	e := l3NewEnv(t)
	e.l3Uplink()
	zero := &items.Route{Dst: l3Prefix("192.0.2.0/24"), Gw: l3Addr("10.0.0.1")}
	hundred := &items.Route{Dst: l3Prefix("192.0.2.0/24"), Gw: l3Addr("10.0.0.1"), Metric: 100}
	e.create(zero)
	e.create(hundred)
	e.delete(zero)
	e.delete(zero)
	e.mustReadBack(hundred)
	e.mustRoute("dst", "192.0.2.0/24", "metric", "100", "protocol", "211")
}

func TestL3RouteBatch(t *testing.T) {
	e := l3NewEnv(t)
	e.l3Uplink()
	e.ip("route", "add", "172.16.0.0/24", "via", "10.0.0.1") // foreign, clashes with one op
	b := e.reg.Configurator(&items.Route{}).(reconciler.BatchConfigurator)

	var ops []reconciler.BatchOp
	var routes []*items.Route
	for i := range 300 {
		r := &items.Route{Dst: netip.PrefixFrom(netip.AddrFrom4([4]byte{172, 16, byte(i >> 8), byte(i)}), 32).Masked(), Gw: l3Addr("10.0.0.1")}
		if i == 0 {
			r.Dst = l3Prefix("172.16.0.0/24")
		}
		routes = append(routes, r)
		ops = append(ops, reconciler.BatchOp{Op: reconciler.OpCreate, New: r})
	}
	errs := b.ApplyBatch(e.ctx, ops)
	l3MustNotOwn(t, "batch create over a foreign route", errs[0])
	for i, err := range errs[1:] {
		if err != nil {
			t.Fatalf("op %d: %v", i+1, err)
		}
	}
	e.mustReadBack(l3Items(routes[1:])...)

	// Twice, then modify half, delete the other half, in one batch.
	for i, err := range b.ApplyBatch(e.ctx, ops[1:]) {
		if err != nil {
			t.Fatalf("second create %d: %v", i, err)
		}
	}
	ops, kept := nil, []*items.Route(nil)
	for i, r := range routes[1:] {
		if i%2 == 0 {
			n := *r
			n.Gw = l3Addr("10.0.0.254")
			ops = append(ops, reconciler.BatchOp{Op: reconciler.OpModify, Old: r, New: &n})
			kept = append(kept, &n)
		} else {
			ops = append(ops, reconciler.BatchOp{Op: reconciler.OpDelete, Old: r})
		}
	}
	for i, err := range b.ApplyBatch(e.ctx, ops) {
		if err != nil {
			t.Fatalf("modify/delete %d: %v", i, err)
		}
	}
	e.mustReadBack(l3Items(kept)...)
	if got := l3Find(e.l3Routes(), "gateway", "10.0.0.254", "protocol", "211"); len(got) != len(kept) {
		t.Errorf("ip shows %d modified routes, want %d", len(got), len(kept))
	}
	e.mustRoute("dst", "172.16.0.0/24", "gateway", "10.0.0.1", "protocol", "") // ip omits "boot"
}

// l3Events counts the route notifications of the namespace.
type l3Events struct {
	ch   chan netlink.RouteUpdate
	done chan struct{}
}

func (e *l3Env) l3WatchRoutes() *l3Events {
	e.t.Helper()
	ev := &l3Events{ch: make(chan netlink.RouteUpdate, 1024), done: make(chan struct{})}
	ns := e.tgt.NsHandle()
	err := netlink.RouteSubscribeWithOptions(ev.ch, ev.done, netlink.RouteSubscribeOptions{Namespace: &ns})
	if err != nil {
		e.t.Fatalf("subscribing to routes: %v", err)
	}
	e.t.Cleanup(ev.stop)
	return ev
}

func (ev *l3Events) stop() {
	select {
	case <-ev.done:
	default:
		close(ev.done)
	}
}

// mustBeQuiet fails if any of netagent's routes changed since the watch
// began. Routes the kernel makes itself (the local route of an IPv6
// link-local address that comes when the link gets carrier) are not writes
// and are skipped: they made this test flaky on a loaded machine.
func (ev *l3Events) mustBeQuiet(t *testing.T, what string) {
	t.Helper()
	timeout := time.After(200 * time.Millisecond)
	for {
		select {
		case u := <-ev.ch:
			if u.Route.Protocol != items.RouteProtocol {
				continue
			}
			t.Errorf("%s: the kernel reported a route change: type %d %v", what, u.Type, u.Route)
		case <-timeout:
		}
		break
	}
	ev.stop()
}

// Interface indexes are not remembered across operations: after up0 is
// renamed and a new up0 appears, a route names the new one.
func TestL3RouteDeviceRenamed(t *testing.T) {
	e := l3NewEnv(t)
	r := &items.Route{Dst: l3Prefix("192.0.2.0/24"), Dev: "up0", Scope: items.ScopeLink}
	e.create(r)
	e.delete(r)
	e.ip("link", "set", "up0", "down")
	e.ip("link", "set", "up0", "name", "old0")
	e.ip("link", "add", "up0", "type", "veth", "peer", "name", "peer1")
	e.ip("link", "set", "up0", "up")
	e.ip("link", "set", "peer1", "up")
	e.create(r)
	e.mustRoute("dst", "192.0.2.0/24", "dev", "up0", "protocol", "211")
	e.mustReadBack(r)
}
