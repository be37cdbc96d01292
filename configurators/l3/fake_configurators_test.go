package l3

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// These tests run the configurators against FakeKernel (fake.go):
// no root, no namespace. The real-kernel tests are in l3_test.go and
// test/netns/l3_*.

// fakeEnv is the four configurators registered over one fake kernel.
type fakeEnv struct {
	k     *FakeKernel
	reg   *reconciler.TypeRegistry
	addr  reconciler.Configurator
	route reconciler.BatchConfigurator
	rule  reconciler.Configurator
	neigh reconciler.Configurator
}

// newFakeEnv makes a kernel with the links up0 (index 2) and up1 (3)
// and registers the configurators as Register does. At the end of the
// test every conn taken must have been given back.
func newFakeEnv(t *testing.T) *fakeEnv {
	t.Helper()
	k := NewFakeKernel("up0", "up1")
	reg := &reconciler.TypeRegistry{}
	if err := k.Register(reg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if k.opens != k.closes {
			t.Errorf("%d conns taken, %d given back", k.opens, k.closes)
		}
	})
	e := &fakeEnv{k: k, reg: reg}
	e.addr = reg.Configurator(&items.Address{})
	e.route = reg.Configurator(&items.Route{}).(reconciler.BatchConfigurator)
	e.rule = reg.Configurator(&items.Rule{})
	e.neigh = reg.Configurator(&items.Neighbor{})
	return e
}

var ctx = context.Background()

// writes runs f and returns how many change requests it sent.
func (e *fakeEnv) writes(f func()) int {
	before := e.k.writes
	f()
	return e.k.writes - before
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func ip(s string) netip.Addr    { return netip.MustParseAddr(s) }

func ipnet(s string) *net.IPNet {
	p := pfx(s)
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func wantNotOwned(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrNotOwned) {
		t.Errorf("%s: got %v, want ErrNotOwned", what, err)
	}
}

// withUplink gives up0 10.0.0.2/24 and 2001:db8::2/64 (someone else's:
// the routes' gateways are on-link through them).
func (e *fakeEnv) withUplink() {
	e.k.addAddr("up0", "10.0.0.2/24", unix.RTPROT_BOOT)
	e.k.addAddr("up0", "2001:db8::2/64", unix.RTPROT_BOOT)
}

// ownedRoute returns our one route of r's identity; it fails the test if
// there is not exactly one.
func (e *fakeEnv) ownedRoute(t *testing.T, r *items.Route) netlink.Route {
	t.Helper()
	var got []netlink.Route
	for _, k := range e.k.routesWith(items.RouteProtocol) {
		if routeIdentity(&k) == r.Name() {
			got = append(got, k)
		}
	}
	if len(got) != 1 {
		t.Fatalf("routes of ours named %s: %v, want one", r.Name(), got)
	}
	return got[0]
}

func TestFakeRouteLifecycle(t *testing.T) {
	for _, c := range []struct{ name, dst, gw, gw2 string }{
		{"IPv4", "192.0.2.0/24", "10.0.0.1", "10.0.0.3"},
		{"IPv6", "2001:db8:1::/48", "2001:db8::1", "2001:db8::3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newFakeEnv(t)
			e.withUplink()
			r := &items.Route{Dst: pfx(c.dst), Gw: ip(c.gw), Dev: "up0", Metric: 100, Table: 100}
			must(t, e.route.Create(ctx, r))
			k := e.ownedRoute(t, r)
			if k.Table != 100 || k.Priority != 100 || k.LinkIndex != 2 || !k.Gw.Equal(r.Gw.AsSlice()) {
				t.Errorf("kernel route %+v", k)
			}
			// A second create finds it as wanted: no change.
			if err := e.route.Create(ctx, r); err != nil {
				t.Errorf("second create: %v", err)
			}
			e.ownedRoute(t, r)

			// Modify in place: one route of the identity, the new gateway.
			moved := *r
			moved.Gw = ip(c.gw2)
			must(t, e.route.Modify(ctx, r, &moved))
			if k := e.ownedRoute(t, r); !k.Gw.Equal(moved.Gw.AsSlice()) {
				t.Errorf("after modify the gateway is %s, want %s", k.Gw, moved.Gw)
			}
			if n := e.writes(func() { must(t, e.route.Modify(ctx, r, &moved)) }); n != 0 {
				t.Errorf("a modify to what the kernel has sent %d writes, want 0", n)
			}

			must(t, e.route.Delete(ctx, &moved))
			if got := e.k.routesWith(items.RouteProtocol); len(got) != 0 {
				t.Errorf("after delete: %v", got)
			}
			if err := e.route.Delete(ctx, &moved); err != nil {
				t.Errorf("deleting what is gone: %v", err)
			}
		})
	}
}

// A route of another protocol at the item's identity is never taken over,
// replaced or deleted; one of another metric is no clash.
func TestFakeRouteForeign(t *testing.T) {
	e := newFakeEnv(t)
	e.withUplink()
	theirs := netlink.Route{Family: unix.AF_INET, Dst: ipnet("192.0.2.0/24"), Gw: net.IPv4(10, 0, 0, 9).To4(),
		LinkIndex: 2, Priority: 100, Protocol: unix.RTPROT_STATIC}
	e.k.addRoute(theirs)
	r := &items.Route{Dst: pfx("192.0.2.0/24"), Gw: ip("10.0.0.1"), Dev: "up0", Metric: 100}
	wantNotOwned(t, "create", e.route.Create(ctx, r))
	wantNotOwned(t, "modify", e.route.Modify(ctx, r, r))
	wantNotOwned(t, "delete", e.route.Delete(ctx, r))
	got := e.k.routesWith(unix.RTPROT_STATIC)
	if len(got) != 1 || !got[0].Gw.Equal(theirs.Gw) {
		t.Errorf("their route is now %v", got)
	}
	if n := len(e.k.routesWith(items.RouteProtocol)); n != 0 {
		t.Errorf("%d routes of ours added beside theirs", n)
	}
	other := *r
	other.Metric = 200
	if err := e.route.Create(ctx, &other); err != nil {
		t.Errorf("another metric: %v", err)
	}
}

// The kernel takes metric 0 in an IPv4 delete as "any metric": when ours
// of metric 0 is gone, the delete hits ours of metric 100, which must be
// put back as it was.
func TestFakeRouteDeleteMetricZero(t *testing.T) {
	e := newFakeEnv(t)
	e.withUplink()
	m0 := &items.Route{Dst: pfx("198.51.100.0/24"), Gw: ip("10.0.0.1"), Dev: "up0"}
	m100 := &items.Route{Dst: pfx("198.51.100.0/24"), Gw: ip("10.0.0.3"), Dev: "up0", Metric: 100, Src: ip("10.0.0.2")}
	must(t, e.route.Create(ctx, m100))
	if err := e.route.Delete(ctx, m0); err != nil {
		t.Fatalf("deleting the absent metric-0 route: %v", err)
	}
	k := e.ownedRoute(t, m100)
	if got, ok := routeFromKernel(&k, map[int]string{2: "up0"}, nil); !ok || !got.Equal(m100) {
		t.Errorf("the metric-100 route came back as %v, want %v", got, m100)
	}
	// With both there, the metric-0 one goes and the other stays.
	must(t, e.route.Create(ctx, m0))
	must(t, e.route.Delete(ctx, m0))
	e.ownedRoute(t, m100)
	if n := len(e.k.routesWith(items.RouteProtocol)); n != 1 {
		t.Errorf("%d routes of ours left, want 1", n)
	}
}

func TestFakeRouteKinds(t *testing.T) {
	e := newFakeEnv(t)
	e.withUplink()
	rs := []*items.Route{
		{Dst: pfx("203.0.113.0/24"), Kind: items.RouteBlackhole},
		{Dst: pfx("2001:db8:dead::/48"), Kind: items.RouteUnreachable},
		{Dst: pfx("10.9.0.0/16"), Dev: "up1", Scope: items.ScopeLink},
		{Dst: pfx("0.0.0.0/0"), Gw: ip("10.0.0.1"), Table: 7}, // the kernel picks the device
	}
	for _, r := range rs {
		must(t, e.route.Create(ctx, r))
		k := e.ownedRoute(t, r)
		if got, ok := routeFromKernel(&k, map[int]string{1: "lo", 2: "up0", 3: "up1"}, r); !ok || !got.Equal(r) {
			t.Errorf("%s reads back as %v", r.Name(), got)
		}
		if err := e.route.Create(ctx, r); err != nil {
			t.Errorf("%s again: %v", r.Name(), err)
		}
	}
	// The kernel's errors come through, naming the route.
	err := e.route.Create(ctx, &items.Route{Dst: pfx("10.8.0.0/16"), Gw: ip("172.16.0.1")})
	if !errors.Is(err, unix.ENETUNREACH) {
		t.Errorf("unreachable gateway: %v", err)
	}
	err = e.route.Create(ctx, &items.Route{Dst: pfx("10.8.0.0/16"), Dev: "nope0"})
	if !errors.Is(err, ErrNoDevice) {
		t.Errorf("missing device: %v", err)
	}
}

// A batch larger than planChunk is planned, sent and answered a chunk at
// a time (the requests of one chunk at most in flight), each operation
// still answered in order, follow-ups included (routes of another
// protocol found in the first and the last chunk), and the family still
// dumped once for the whole batch.
func TestFakeRouteBatchChunks(t *testing.T) {
	defer func(n int) { planChunk = n }(planChunk)
	planChunk = 64
	e := newFakeEnv(t)
	e.withUplink()
	n := 2*planChunk + 10
	var routes []*items.Route
	for i := range n {
		routes = append(routes, &items.Route{Dst: netip.PrefixFrom(netip.AddrFrom4([4]byte{172, 16, byte(i >> 8), byte(i)}), 32),
			Gw: ip("10.0.0.1"), Dev: "up0"})
	}
	theirs := []int{3, n - 2}
	for _, i := range theirs {
		e.k.addRoute(netlink.Route{Family: unix.AF_INET, Dst: ipnet(routes[i].Dst.String()), LinkIndex: 3, Protocol: unix.RTPROT_BOOT})
	}
	dumps := e.k.routeDumps
	errs := e.route.ApplyBatch(ctx, batchOps(reconciler.OpCreate, routes))
	if len(errs) != n {
		t.Fatalf("%d answers for %d operations", len(errs), n)
	}
	for i, err := range errs {
		if slices.Contains(theirs, i) {
			wantNotOwned(t, fmt.Sprintf("op %d over theirs", i), err)
		} else if err != nil {
			t.Errorf("op %d: %v", i, err)
		}
	}
	if got := len(e.k.routesWith(items.RouteProtocol)); got != n-len(theirs) {
		t.Errorf("%d routes of ours, want %d", got, n-len(theirs))
	}
	if e.k.maxExchange > planChunk {
		t.Errorf("%d requests in flight at once, want at most %d", e.k.maxExchange, planChunk)
	}
	if d := e.k.routeDumps - dumps; d != 1 {
		t.Errorf("%d route dumps in one batch, want 1", d)
	}
}

// ApplyBatch: one answer per operation, in order; a failing operation
// does not stop the others; each family is dumped at most once.
func TestFakeRouteBatch(t *testing.T) {
	e := newFakeEnv(t)
	e.withUplink()
	const n = 300 // more than one chunk of a real conn
	var routes []*items.Route
	for i := range n {
		routes = append(routes, &items.Route{Dst: netip.PrefixFrom(netip.AddrFrom4([4]byte{172, 16, byte(i >> 8), byte(i)}), 32),
			Gw: ip("10.0.0.1"), Dev: "up0"})
	}
	e.k.addRoute(netlink.Route{Family: unix.AF_INET, Dst: ipnet("172.16.0.5/32"), LinkIndex: 3, Protocol: unix.RTPROT_BOOT})
	ops := batchOps(reconciler.OpCreate, routes)
	ops = append(ops, reconciler.BatchOp{Op: reconciler.OpCreate, New: &items.Route{Dst: pfx("10.7.0.0/16"), Dev: "gone0"}})
	dumps := e.k.routeDumps
	errs := e.route.ApplyBatch(ctx, ops)
	for i, err := range errs {
		switch i {
		case 5:
			wantNotOwned(t, "create over theirs in a batch", err)
		case n:
			if !errors.Is(err, ErrNoDevice) {
				t.Errorf("missing device in a batch: %v", err)
			}
		default:
			if err != nil {
				t.Errorf("op %d: %v", i, err)
			}
		}
	}
	if d := e.k.routeDumps - dumps; d > 1 {
		t.Errorf("%d route dumps in one batch, want at most 1", d)
	}
	if got := len(e.k.routesWith(items.RouteProtocol)); got != n-1 {
		t.Errorf("%d routes of ours, want %d", got, n-1)
	}

	// Again: nothing to change, nothing written but the exclusive adds
	// (answered EEXIST).
	if w := e.writes(func() {
		for i, err := range e.route.ApplyBatch(ctx, batchOps(reconciler.OpCreate, routes)) {
			if err != nil && i != 5 {
				t.Errorf("second batch, op %d: %v", i, err)
			}
		}
	}); w != n {
		t.Errorf("second batch sent %d requests, want %d (one exclusive add each)", w, n)
	}

	// A batch of modifies moves them all in place.
	var mods []reconciler.BatchOp
	for _, r := range routes {
		m := *r
		m.Gw = ip("10.0.0.3")
		mods = append(mods, reconciler.BatchOp{Op: reconciler.OpModify, Old: r, New: &m})
	}
	dumps = e.k.routeDumps
	for i, err := range e.route.ApplyBatch(ctx, mods) {
		if err != nil && i != 5 {
			t.Errorf("modify op %d: %v", i, err)
		}
	}
	if d := e.k.routeDumps - dumps; d != 1 {
		t.Errorf("%d route dumps for a batch of modifies, want 1", d)
	}
	for _, k := range e.k.routesWith(items.RouteProtocol) {
		if !k.Gw.Equal(net.IPv4(10, 0, 0, 3)) {
			t.Errorf("route %s not moved: gateway %s", k.Dst, k.Gw)
		}
	}
	if got := len(e.k.routesWith(items.RouteProtocol)); got != n-1 {
		t.Errorf("%d routes of ours after modify, want %d", got, n-1)
	}

	for i, err := range e.route.ApplyBatch(ctx, batchOps(reconciler.OpDelete, routes)) {
		if i == 5 {
			wantNotOwned(t, "delete of theirs in a batch", err)
		} else if err != nil {
			t.Errorf("delete op %d: %v", i, err)
		}
	}
	if got := e.k.routesWith(items.RouteProtocol); len(got) != 0 {
		t.Errorf("%d routes of ours left", len(got))
	}
	if got := e.k.routesWith(unix.RTPROT_BOOT); len(got) != 1 {
		t.Errorf("their route: %v", got)
	}
}

func batchOps(op reconciler.Operation, routes []*items.Route) []reconciler.BatchOp {
	ops := make([]reconciler.BatchOp, len(routes))
	for i, r := range routes {
		ops[i] = reconciler.BatchOp{Op: op}
		if op == reconciler.OpDelete {
			ops[i].Old = r
		} else {
			ops[i].New = r
		}
	}
	return ops
}

// An interface renamed and its name reused during a batch: the kernel
// answers ENODEV for the stale index, and the route goes to the new one.
func TestFakeRouteBatchStaleIndex(t *testing.T) {
	e := newFakeEnv(t)
	r1 := &items.Route{Dst: pfx("10.1.0.0/16"), Dev: "up1", Scope: items.ScopeLink}
	r2 := &items.Route{Dst: pfx("10.2.0.0/16"), Dev: "up1", Scope: items.ScopeLink}
	swapped := false
	e.k.fail = func(typ uint16) error {
		if typ == unix.RTM_NEWROUTE && !swapped {
			swapped = true
			// up1 (index 3) goes; a new up1 (index 4) comes.
			e.k.links[2] = ""
			e.k.links = append(e.k.links, "up1")
			return unix.ENODEV
		}
		return nil
	}
	for i, err := range e.route.ApplyBatch(ctx, batchOps(reconciler.OpCreate, []*items.Route{r1, r2})) {
		if err != nil {
			t.Errorf("op %d: %v", i, err)
		}
	}
	for _, r := range []*items.Route{r1, r2} {
		if k := e.ownedRoute(t, r); k.LinkIndex != 4 {
			t.Errorf("%s on index %d, want the new up1 (4)", r.Name(), k.LinkIndex)
		}
	}
}

func TestFakeAddressLifecycle(t *testing.T) {
	for _, c := range []struct{ name, prefix string }{{"IPv4", "192.0.2.10/24"}, {"IPv6", "2001:db8:5::10/64"}} {
		t.Run(c.name, func(t *testing.T) {
			e := newFakeEnv(t)
			a := &items.Address{Dev: "up0", Prefix: pfx(c.prefix)}
			must(t, e.addr.Create(ctx, a))
			k, ok := e.k.addrOn("up0", c.prefix)
			if !ok || !k.owned() {
				t.Fatalf("kernel address %+v (%v)", k, ok)
			}
			if !a.Prefix.Addr().Is4() && k.flags&unix.IFA_F_NODAD == 0 {
				t.Error("IPv6 address added without IFA_F_NODAD")
			}
			if n := e.writes(func() { must(t, e.addr.Create(ctx, a)) }); n != 0 {
				t.Errorf("second create sent %d writes, want 0", n)
			}
			must(t, e.addr.Delete(ctx, a))
			if _, ok := e.k.addrOn("up0", c.prefix); ok {
				t.Error("address still there after delete")
			}
			if err := e.addr.Delete(ctx, a); err != nil {
				t.Errorf("deleting what is gone: %v", err)
			}
		})
	}
}

// Label and scope cannot change in place: Modify refuses and asks for a
// recreate; Create over ours with another label replaces it.
func TestFakeAddressRecreate(t *testing.T) {
	e := newFakeEnv(t)
	a := &items.Address{Dev: "up0", Prefix: pfx("192.0.2.10/24")}
	must(t, e.addr.Create(ctx, a))
	labelled := &items.Address{Dev: "up0", Prefix: a.Prefix, Label: "up0:web"}
	if !e.addr.NeedsRecreate(a, labelled) {
		t.Error("a new label does not ask for a recreate")
	}
	if err := e.addr.Modify(ctx, a, labelled); !errors.Is(err, ErrNeedsRecreate) {
		t.Errorf("modify of the label: %v", err)
	}
	must(t, e.addr.Create(ctx, labelled))
	if k, _ := e.k.addrOn("up0", "192.0.2.10/24"); k.label != "up0:web" || !k.owned() {
		t.Errorf("after create with a label: %+v", k)
	}
	// An IPv4 address of another length is another address; an IPv6
	// address is keyed by the address alone: ours of another length holds
	// it, and is neither replaced nor deleted.
	must(t, e.addr.Create(ctx, &items.Address{Dev: "up0", Prefix: pfx("192.0.2.10/25")}))
	v6 := &items.Address{Dev: "up0", Prefix: pfx("2001:db8::10/64")}
	must(t, e.addr.Create(ctx, v6))
	other := &items.Address{Dev: "up0", Prefix: pfx("2001:db8::10/80")}
	if err := e.addr.Create(ctx, other); err == nil {
		t.Error("IPv6 create beside ours of another length succeeded")
	}
	must(t, e.addr.Delete(ctx, other))
	if k, ok := e.k.addrOn("up0", "2001:db8::10/64"); !ok || !k.owned() {
		t.Errorf("our /64 after the /80's create and delete: %+v (%v)", k, ok)
	}
}

func TestFakeAddressForeign(t *testing.T) {
	e := newFakeEnv(t)
	e.k.addAddr("up0", "192.0.2.10/24", 0) // an administrator's, no IFA_PROTO
	e.k.addAddr("up0", "2001:db8::10/64", unix.RTPROT_BOOT)
	for _, a := range []*items.Address{
		{Dev: "up0", Prefix: pfx("192.0.2.10/24")},
		{Dev: "up0", Prefix: pfx("2001:db8::10/80")}, // IPv6: the address alone is the key
	} {
		wantNotOwned(t, "create "+a.Name(), e.addr.Create(ctx, a))
		wantNotOwned(t, "delete "+a.Name(), e.addr.Delete(ctx, a))
	}
	if _, ok := e.k.addrOn("up0", "192.0.2.10/24"); !ok {
		t.Error("their IPv4 address is gone")
	}
	if k, ok := e.k.addrOn("up0", "2001:db8::10/64"); !ok || k.proto != unix.RTPROT_BOOT {
		t.Errorf("their IPv6 address is now %+v (%v)", k, ok)
	}
	// The same IPv4 address with another length is another address.
	must(t, e.addr.Create(ctx, &items.Address{Dev: "up0", Prefix: pfx("192.0.2.10/32")}))
}

func TestFakeAddressNoDevice(t *testing.T) {
	e := newFakeEnv(t)
	a := &items.Address{Dev: "gone0", Prefix: pfx("192.0.2.10/24")}
	if err := e.addr.Create(ctx, a); !errors.Is(err, ErrNoDevice) {
		t.Errorf("create on a missing device: %v", err)
	}
	if err := e.addr.Delete(ctx, a); err != nil {
		t.Errorf("delete on a missing device: %v", err)
	}
	// An interface that goes takes its objects with it: deleting ours then
	// succeeds.
	on1 := &items.Address{Dev: "up1", Prefix: pfx("192.0.2.10/24")}
	n := &items.Neighbor{Dev: "up1", IP: ip("192.0.2.1"), MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}}
	r := &items.Route{Dst: pfx("10.1.0.0/16"), Gw: ip("192.0.2.1"), Dev: "up1"}
	for _, it := range []dg.Item{on1, n, r} {
		must(t, e.reg.Configurator(it).Create(ctx, it))
	}
	e.k.delLink("up1")
	for _, it := range []dg.Item{on1, n, r} {
		if err := e.reg.Configurator(it).Delete(ctx, it); err != nil {
			t.Errorf("deleting %s after its interface went: %v", dg.Ref(it), err)
		}
	}
}

// A kernel that drops IFA_PROTO / NDA_PROTOCOL: the create fails with
// ErrNoMark and leaves nothing behind.
func TestFakeNoMark(t *testing.T) {
	e := newFakeEnv(t)
	e.k.dropMarks = true
	a := &items.Address{Dev: "up0", Prefix: pfx("192.0.2.10/24")}
	if err := e.addr.Create(ctx, a); !errors.Is(err, ErrNoMark) {
		t.Errorf("address: %v", err)
	}
	if _, ok := e.k.addrOn("up0", "192.0.2.10/24"); ok {
		t.Error("the unmarked address was left")
	}
	n := &items.Neighbor{Dev: "up0", IP: ip("192.0.2.1"), MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}}
	if err := e.neigh.Create(ctx, n); !errors.Is(err, ErrNoMark) {
		t.Errorf("neighbor: %v", err)
	}
	if _, ok := e.k.neighOn("up0", "192.0.2.1"); ok {
		t.Error("the unmarked entry was left")
	}
}

// Deleting a primary IPv4 address: with promote_secondaries off, the
// kernel would take the secondaries (make before break: the new address
// added beside the old one) and, with the last of them, every route
// through the interface. The configurator turns it on for the one delete.
func TestFakeAddressPromoteSecondaries(t *testing.T) {
	e := newFakeEnv(t)
	old := &items.Address{Dev: "up0", Prefix: pfx("10.0.0.2/24")}
	repl := &items.Address{Dev: "up0", Prefix: pfx("10.0.0.3/24")}
	must(t, e.addr.Create(ctx, old))
	must(t, e.addr.Create(ctx, repl))
	if k, _ := e.k.addrOn("up0", "10.0.0.3/24"); !k.secondary() {
		t.Fatalf("the second address is not secondary: %+v", k)
	}
	theirs := netlink.Route{Family: unix.AF_INET, Dst: ipnet("192.168.0.0/16"), Gw: net.IPv4(10, 0, 0, 1).To4(),
		LinkIndex: 2, Protocol: unix.RTPROT_STATIC}
	e.k.addRoute(theirs)
	ours := &items.Route{Dst: pfx("0.0.0.0/0"), Gw: ip("10.0.0.1"), Dev: "up0"}
	must(t, e.route.Create(ctx, ours))

	must(t, e.addr.Delete(ctx, old))
	k, ok := e.k.addrOn("up0", "10.0.0.3/24")
	if !ok || k.secondary() {
		t.Errorf("the new address was not promoted: %+v (%v)", k, ok)
	}
	if len(e.k.routesWith(unix.RTPROT_STATIC)) != 1 || len(e.k.routesWith(items.RouteProtocol)) != 1 {
		t.Error("routes through the interface went with the old address")
	}
	if e.k.promote["up0"] {
		t.Error("promote_secondaries left on")
	}

	// The last IPv4 address: the kernel would flush their route with it.
	wantNotOwned(t, "delete of the last address", e.addr.Delete(ctx, repl))
	if _, ok := e.k.addrOn("up0", "10.0.0.3/24"); !ok {
		t.Error("the refused delete removed the address")
	}
}

// Without the sysctl hook (a kernel that cannot promote), a primary of
// ours with someone's secondary is refused, and ours are added back.
func TestFakeAddressPrimaryOfTheirs(t *testing.T) {
	e := newFakeEnv(t)
	cfg := &addressConfigurator{nlh: e.k, open: e.k.open, promotes: e.k.promotes}
	a := &items.Address{Dev: "up0", Prefix: pfx("10.0.0.2/24")}
	must(t, cfg.Create(ctx, a))
	e.k.addAddr("up0", "10.0.0.9/24", 0)
	wantNotOwned(t, "delete of the primary of their secondary", cfg.Delete(ctx, a))
	if _, ok := e.k.addrOn("up0", "10.0.0.9/24"); !ok {
		t.Error("their secondary was deleted")
	}
	// Ours as the secondary: deleted with the primary and added back.
	e2 := newFakeEnv(t)
	cfg = &addressConfigurator{nlh: e2.k, open: e2.k.open, promotes: e2.k.promotes}
	sec := &items.Address{Dev: "up0", Prefix: pfx("10.0.0.3/24")}
	must(t, cfg.Create(ctx, a))
	must(t, cfg.Create(ctx, sec))
	must(t, cfg.Delete(ctx, a))
	if k, ok := e2.k.addrOn("up0", "10.0.0.3/24"); !ok || !k.owned() {
		t.Errorf("our secondary was not added back: %+v (%v)", k, ok)
	}
}

func TestFakeRuleLifecycle(t *testing.T) {
	e := newFakeEnv(t)
	r := &items.Rule{Priority: 100, Family: items.FamilyIPv4, From: pfx("10.0.0.0/8"), Mark: 7, Table: 100}
	must(t, e.rule.Create(ctx, r))
	if n := e.writes(func() { must(t, e.rule.Create(ctx, r)) }); n != 0 {
		t.Errorf("second create sent %d writes", n)
	}
	if got := ownRules(e.k); len(got) != 1 || got[0].Mark != 7 || *got[0].Mask != 0xffffffff {
		t.Errorf("rules of ours: %+v", got)
	}
	// Modify never writes: only Deps may differ.
	withDeps := *r
	withDeps.Deps = []dg.ItemRef{items.InterfaceRef("up0")}
	if n := e.writes(func() { must(t, e.rule.Modify(ctx, r, &withDeps)) }); n != 0 {
		t.Errorf("modify sent %d writes", n)
	}
	other := *r
	other.Table = 101
	if err := e.rule.Modify(ctx, r, &other); !errors.Is(err, ErrNeedsRecreate) {
		t.Errorf("modify of the table: %v", err)
	}
	must(t, e.rule.Delete(ctx, r))
	if got := ownRules(e.k); len(got) != 0 {
		t.Errorf("after delete: %+v", got)
	}
	if err := e.rule.Delete(ctx, r); err != nil {
		t.Errorf("deleting what is gone: %v", err)
	}
	// "from all" beside "from 10.0.0.0/8" of the same priority and table:
	// the kernel's exclusive check would call it a duplicate.
	all := &items.Rule{Priority: 100, Family: items.FamilyIPv4, Table: 100}
	narrow := &items.Rule{Priority: 100, Family: items.FamilyIPv4, From: pfx("10.0.0.0/8"), Table: 100}
	must(t, e.rule.Create(ctx, narrow))
	must(t, e.rule.Create(ctx, all))
	if got := ownRules(e.k); len(got) != 2 {
		t.Errorf("rules of ours: %+v", got)
	}
}

func ownRules(k *FakeKernel) []netlink.Rule {
	var out []netlink.Rule
	list, _ := k.RuleList(netlink.FAMILY_ALL)
	for _, r := range list {
		if r.Protocol == items.RouteProtocol {
			out = append(out, r)
		}
	}
	return out
}

// The kernel deletes the first rule with every selector a request names:
// a delete of a rule without iif would hit ours with an iif listed
// before it. That one must survive.
func TestFakeRuleDeleteShadow(t *testing.T) {
	e := newFakeEnv(t)
	shadow := &items.Rule{Priority: 200, Family: items.FamilyIPv6, From: pfx("2001:db8::/32"), IifName: "up0", Table: 100}
	r := &items.Rule{Priority: 200, Family: items.FamilyIPv6, From: pfx("2001:db8::/32"), Table: 100}
	must(t, e.rule.Create(ctx, shadow))
	must(t, e.rule.Create(ctx, r))
	must(t, e.rule.Delete(ctx, r))
	got := ownRules(e.k)
	if len(got) != 1 || got[0].IifName != "up0" {
		t.Errorf("after deleting the rule without iif: %+v", got)
	}
}

func TestFakeRuleForeign(t *testing.T) {
	e := newFakeEnv(t)
	theirs := netlink.NewRule()
	theirs.Family, theirs.Priority, theirs.Table, theirs.Src, theirs.Protocol = unix.AF_INET, 300, 100, ipnet("10.0.0.0/8"), unix.RTPROT_STATIC
	e.k.addRule(theirs)
	r := &items.Rule{Priority: 300, Family: items.FamilyIPv4, From: pfx("10.0.0.0/8"), Table: 100}
	wantNotOwned(t, "create", e.rule.Create(ctx, r))
	wantNotOwned(t, "delete", e.rule.Delete(ctx, r))
	list, _ := e.k.RuleList(netlink.FAMILY_V4)
	found := 0
	for _, k := range list {
		if k.Priority == 300 {
			found++
			if k.Protocol != unix.RTPROT_STATIC {
				t.Errorf("rule at 300 is %+v", k)
			}
		}
	}
	if found != 1 {
		t.Errorf("%d rules at priority 300, want theirs alone", found)
	}
}

func TestFakeNeighborLifecycle(t *testing.T) {
	e := newFakeEnv(t)
	mac1, mac2 := net.HardwareAddr{2, 0, 0, 0, 0, 1}, net.HardwareAddr{2, 0, 0, 0, 0, 2}
	n := &items.Neighbor{Dev: "up0", IP: ip("2001:db8::7"), MAC: mac1}
	must(t, e.neigh.Create(ctx, n))
	if n := e.writes(func() { must(t, e.neigh.Create(ctx, n)) }); n != 0 {
		t.Errorf("second create sent %d writes", n)
	}
	moved := &items.Neighbor{Dev: "up0", IP: n.IP, MAC: mac2}
	must(t, e.neigh.Modify(ctx, n, moved))
	if k, ok := e.k.neighOn("up0", "2001:db8::7"); !ok || !macEq(k.mac, mac2) || !k.owned() || k.state != netlink.NUD_PERMANENT {
		t.Errorf("after modify: %+v", k)
	}
	if n := e.writes(func() { must(t, e.neigh.Modify(ctx, moved, moved)) }); n != 0 {
		t.Errorf("modify to what the kernel has sent %d writes", n)
	}
	must(t, e.neigh.Delete(ctx, moved))
	if _, ok := e.k.neighOn("up0", "2001:db8::7"); ok {
		t.Error("entry left after delete")
	}
	if err := e.neigh.Delete(ctx, moved); err != nil {
		t.Errorf("deleting what is gone: %v", err)
	}
}

// A learned entry is the kernel's cache and is replaced; someone's static
// entry is not theirs to take; a learned entry in ours' place survives our
// delete.
func TestFakeNeighborForeign(t *testing.T) {
	e := newFakeEnv(t)
	mac := net.HardwareAddr{2, 0, 0, 0, 0, 1}
	e.k.addNeigh("up0", "192.0.2.5", "02:00:00:00:00:99", netlink.NUD_STALE, 0)
	e.k.addNeigh("up1", "192.0.2.6", "02:00:00:00:00:98", netlink.NUD_PERMANENT, 0)
	learned := &items.Neighbor{Dev: "up0", IP: ip("192.0.2.5"), MAC: mac}
	must(t, e.neigh.Create(ctx, learned))
	if k, _ := e.k.neighOn("up0", "192.0.2.5"); !k.owned() || !macEq(k.mac, mac) {
		t.Errorf("the learned entry was not replaced: %+v", k)
	}
	static := &items.Neighbor{Dev: "up1", IP: ip("192.0.2.6"), MAC: mac}
	wantNotOwned(t, "create over a static entry", e.neigh.Create(ctx, static))
	wantNotOwned(t, "delete of a static entry", e.neigh.Delete(ctx, static))
	if k, ok := e.k.neighOn("up1", "192.0.2.6"); !ok || k.owned() || macEq(k.mac, mac) {
		t.Errorf("their static entry is now %+v (%v)", k, ok)
	}
	e.k.addNeigh("up1", "192.0.2.7", "02:00:00:00:00:97", netlink.NUD_REACHABLE, 0)
	if err := e.neigh.Delete(ctx, &items.Neighbor{Dev: "up1", IP: ip("192.0.2.7"), MAC: mac}); err != nil {
		t.Errorf("delete with a learned entry in its place: %v", err)
	}
	if _, ok := e.k.neighOn("up1", "192.0.2.7"); !ok {
		t.Error("the learned entry was deleted")
	}
}

// ReadBack returns exactly netagent's objects, Equal to what was applied;
// Clashes names the intended items that others' objects hold.
func TestFakeReadBackAndClashes(t *testing.T) {
	e := newFakeEnv(t)
	e.withUplink()
	mine := []dg.Item{
		&items.Address{Dev: "up1", Prefix: pfx("198.51.100.1/24"), Label: "up1:x"},
		&items.Address{Dev: "up1", Prefix: pfx("2001:db8:1::1/64")},
		&items.Route{Dst: pfx("0.0.0.0/0"), Gw: ip("10.0.0.1"), CarrierLink: "up0"},
		&items.Route{Dst: pfx("2001:db8:2::/48"), Gw: ip("2001:db8::1"), Dev: "up0", Table: 100},
		&items.Route{Dst: pfx("203.0.113.0/24"), Kind: items.RouteProhibit, Metric: 10},
		&items.Rule{Priority: 100, Family: items.FamilyIPv4, Mark: 1, Mask: 0xff, Table: 100},
		&items.Rule{Priority: 101, Family: items.FamilyIPv6, To: pfx("2001:db8::/32"), OifName: "up0", Table: 100},
		&items.Neighbor{Dev: "up0", IP: ip("10.0.0.1"), MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}},
	}
	for _, it := range mine {
		must(t, e.reg.Configurator(it).Create(ctx, it))
	}
	// Others' objects, ours that only now an item describes (multipath, an
	// ip proto selector), and ours that no item describes (a tos).
	e.k.addRoute(netlink.Route{Family: unix.AF_INET, Dst: ipnet("10.50.0.0/16"), Gw: net.IPv4(10, 0, 0, 1).To4(), LinkIndex: 2, Protocol: unix.RTPROT_BOOT})
	e.k.addRoute(netlink.Route{Family: unix.AF_INET, Dst: ipnet("10.51.0.0/16"), Protocol: items.RouteProtocol,
		MultiPath: []*netlink.NexthopInfo{{LinkIndex: 2, Gw: net.IPv4(10, 0, 0, 1).To4(), Hops: 2}, {LinkIndex: 2, Gw: net.IPv4(10, 0, 0, 3).To4()}}})
	e.k.addRoute(netlink.Route{Family: unix.AF_INET, Dst: ipnet("10.52.0.0/16"), LinkIndex: 2, Tos: 4, Protocol: items.RouteProtocol})
	e.k.addRoute(netlink.Route{Family: unix.AF_INET, Dst: ipnet("10.53.0.0/16"), Protocol: unix.RTPROT_STATIC,
		MultiPath: []*netlink.NexthopInfo{{LinkIndex: 2, Gw: net.IPv4(10, 0, 0, 1).To4()}, {LinkIndex: 3}}})
	proto := netlink.NewRule()
	proto.Family, proto.Priority, proto.Table, proto.IPProto, proto.Protocol = unix.AF_INET, 150, 100, 6, items.RouteProtocol
	e.k.addRule(proto)
	tos := netlink.NewRule()
	tos.Family, tos.Priority, tos.Table, tos.Tos, tos.Protocol = unix.AF_INET, 151, 100, 4, items.RouteProtocol
	e.k.addRule(tos)
	theirs := netlink.NewRule()
	theirs.Family, theirs.Priority, theirs.Type, theirs.Dport, theirs.Protocol = unix.AF_INET6, 152, frActProhibit, netlink.NewRulePortRange(53, 53), unix.RTPROT_STATIC
	theirs.IPProto = 17
	e.k.addRule(theirs)
	e.k.addAddr("up1", "192.0.2.1/24", 0)
	e.k.addNeigh("up0", "10.0.0.9", "02:00:00:00:00:09", netlink.NUD_PERMANENT, 0)

	// An intended route that others' 10.50.0.0/16 holds: read back as the
	// Foreign holding it; their 10.53.0.0/16 holds no intended route's
	// identity, so it is not read (the dump asks the kernel for netagent's
	// protocol only, and for the tables of missing routes).
	held := &items.Route{Dst: pfx("10.50.0.0/16"), Gw: ip("10.0.0.2")}
	hint := dg.New("intended", append(slices.Clone(mine), held)...)
	got, err := readBack(e.k, hint)
	must(t, err)
	now := append(slices.Clone(mine),
		&items.Route{Dst: pfx("10.51.0.0/16"), Nexthops: []items.Nexthop{{Gw: ip("10.0.0.1"), Dev: "up0", Weight: 3}, {Gw: ip("10.0.0.3"), Dev: "up0"}}},
		&items.Rule{Priority: 150, Family: items.FamilyIPv4, IPProto: 6, Table: 100})
	foreign := map[string]*items.Foreign{
		"route 10.50.0.0/16 via 10.0.0.1 dev up0 table main metric 0 scope global proto 3": {
			Holds: dg.ItemRef{Type: items.TypeRoute, Name: "main 10.50.0.0/16 metric 0"}},
		"route main 10.52.0.0/16 metric 0 tos 0x4 type 1 dev up0 proto 211": {Owned: true},
		"rule ipv4 151: tos 0x4 action 1 table 100 proto 211":               {Owned: true},
		"rule ipv6 152: from all ipproto udp dport 53 prohibit proto 4": {
			Holds: dg.ItemRef{Type: items.TypeRule, Name: "ipv6 152: from all ipproto udp dport 53 prohibit"}},
	}
	byRef := make(map[dg.ItemRef]dg.Item)
	for _, it := range got {
		if f, ok := it.(*items.Foreign); ok {
			want, found := foreign[f.Name()]
			if !found || f.Holds != want.Holds || f.Owned != want.Owned {
				t.Errorf("foreign %q (holds %v, owned %v): want %+v", f.Name(), f.Holds, f.Owned, want)
			}
			delete(foreign, f.Name())
			continue
		}
		byRef[dg.Ref(it)] = it
	}
	for name := range foreign {
		t.Errorf("foreign %q not read back", name)
	}
	if len(byRef) != len(now) {
		t.Errorf("read back %d items, want %d: %v", len(byRef), len(now), got)
	}
	for _, want := range now {
		if it, ok := byRef[dg.Ref(want)]; !ok || !it.Equal(want) {
			t.Errorf("%s read back as %v", dg.Ref(want), it)
		}
	}

	// The intent now wants what others hold.
	clashing := []dg.Item{
		&items.Route{Dst: pfx("10.50.0.0/16"), Gw: ip("10.0.0.1")},
		&items.Address{Dev: "up1", Prefix: pfx("192.0.2.1/24")},
		&items.Neighbor{Dev: "up0", IP: ip("10.0.0.9"), MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}},
	}
	c, err := clashes(e.k, e.k, dg.New("intended", append(clashing, mine...)...))
	must(t, err)
	if len(c) != len(clashing) {
		t.Errorf("clashes %v, want %d", c, len(clashing))
	}
	for _, it := range clashing {
		if !errors.Is(c[dg.Ref(it)], ErrNotOwned) {
			t.Errorf("%s: clash %v", dg.Ref(it), c[dg.Ref(it)])
		}
		if err := e.reg.Configurator(it).Create(ctx, it); !errors.Is(err, ErrNotOwned) {
			t.Errorf("%s: create gives %v, clashes predicted ErrNotOwned", dg.Ref(it), err)
		}
	}
}

// Refusals predicts the deletes delAddr refuses: an interface's last IPv4
// address while others' routes go through it.
func TestFakeRefusals(t *testing.T) {
	e := newFakeEnv(t)
	a := &items.Address{Dev: "up0", Prefix: pfx("10.0.0.2/24")}
	b := &items.Address{Dev: "up0", Prefix: pfx("10.0.0.3/24")}
	must(t, e.addr.Create(ctx, a))
	e.k.addRoute(netlink.Route{Family: unix.AF_INET, Dst: ipnet("192.168.0.0/16"), Gw: net.IPv4(10, 0, 0, 1).To4(), LinkIndex: 2, Protocol: unix.RTPROT_STATIC})
	r, err := newRefusals(e.k, e.k)
	must(t, err)
	if err := r.Predict(reconciler.OpCreate, b); err != nil {
		t.Errorf("create: %v", err)
	}
	if err := r.Predict(reconciler.OpDelete, a); err != nil {
		t.Errorf("delete of a with b beside it: %v", err)
	}
	pred := r.Predict(reconciler.OpDelete, b)
	wantNotOwned(t, "predicted delete of the last address", pred)
	// The configurator agrees, step by step.
	must(t, e.addr.Create(ctx, b))
	must(t, e.addr.Delete(ctx, a))
	if err := e.addr.Delete(ctx, b); !errors.Is(err, ErrNotOwned) {
		t.Errorf("delete of the last address: %v, predicted %v", err, pred)
	}
}

// A full reconcile over the fake: the second run writes nothing.
func TestFakeReconcileTwice(t *testing.T) {
	e := newFakeEnv(t)
	e.withUplink()
	// The interface exists already (its configurator, package link's, must
	// not be called).
	up1 := &items.Interface{IfName: "up1", Kind: items.KindBridge}
	must(t, e.reg.Register(items.TypeInterface, noCalls{t}))
	want := []dg.Item{
		up1,
		&items.Address{Dev: "up1", Prefix: pfx("198.51.100.1/24")},
		&items.Route{Dst: pfx("203.0.113.0/24"), Gw: ip("198.51.100.254"), Dev: "up1",
			GwAddress: items.AddressName("up1", pfx("198.51.100.1/24"))},
		&items.Rule{Priority: 100, Family: items.FamilyIPv4, From: pfx("198.51.100.0/24"), Table: 254},
		&items.Neighbor{Dev: "up1", IP: ip("198.51.100.254"), MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}},
	}
	run := func() {
		t.Helper()
		cur, err := readBack(e.k, dg.New("intended", want...))
		must(t, err)
		st := reconciler.New(e.reg).Reconcile(ctx, dg.New("current", append(cur, up1)...), dg.New("intended", want...))
		if st.Err != nil || len(st.Blocked) > 0 {
			t.Fatalf("reconcile: %v, blocked %v", st.Err, st.Blocked)
		}
	}
	run()
	if n := e.writes(run); n != 0 {
		t.Errorf("second reconcile sent %d writes, want 0", n)
	}
	got, err := readBack(e.k, dg.New("intended", want...))
	must(t, err)
	if len(got) != len(want)-1 {
		t.Errorf("read back %v", got)
	}
}

// noCalls is a configurator that must not be called.
type noCalls struct{ t *testing.T }

func (n noCalls) Create(context.Context, dg.Item) error {
	n.t.Error("interface configurator called")
	return nil
}

func (n noCalls) Modify(context.Context, dg.Item, dg.Item) error {
	n.t.Error("interface configurator called")
	return nil
}

func (n noCalls) Delete(context.Context, dg.Item) error {
	n.t.Error("interface configurator called")
	return nil
}

func (n noCalls) NeedsRecreate(dg.Item, dg.Item) bool { return false }

// With Links, the fake's links are another fake's: an address goes on a
// link that appears there, and goes with it when it is gone.
func TestFakeFollowsLinks(t *testing.T) {
	e := newFakeEnv(t)
	links := map[int]string{1: "lo", 2: "up0", 3: "up1"}
	e.k.Links = func() map[int]string { return links }
	a := &items.Address{Dev: "br0", Prefix: pfx("192.0.2.10/24")}
	if err := e.addr.Create(ctx, a); !errors.Is(err, ErrNoDevice) {
		t.Fatalf("address on a link that is not there: %v, want ErrNoDevice", err)
	}
	links[5] = "br0"
	must(t, e.addr.Create(ctx, a))
	if k, ok := e.k.addrOn("br0", "192.0.2.10/24"); !ok || k.index != 5 {
		t.Fatalf("kernel address %+v (%v), want one on index 5", k, ok)
	}
	delete(links, 5)
	got, err := e.k.ReadBack(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range got {
		if _, ok := it.(*items.Address); ok {
			t.Errorf("read back %v after its link is gone", it)
		}
	}
}

// With adopt, someone else's address equal to the item gets only the
// mark, in place; without adopt the refusal stays.
func TestFakeAddressAdopt(t *testing.T) {
	e := newFakeEnv(t)
	a := &items.Address{Dev: "up0", Prefix: pfx("10.0.0.2/24")}
	e.k.addAddr("up0", "10.0.0.2/24", unix.RTPROT_STATIC)
	plain := &addressConfigurator{nlh: e.k, open: e.k.open, promotes: e.k.promotes}
	wantNotOwned(t, "create over theirs without adopt", plain.Create(ctx, a))
	cfg := &addressConfigurator{nlh: e.k, open: e.k.open, promotes: e.k.promotes, adopt: true}
	must(t, cfg.Create(ctx, a))
	if k, ok := e.k.addrOn("up0", "10.0.0.2/24"); !ok || !k.owned() {
		t.Fatalf("not adopted: %+v (%v)", k, ok)
	}
	if n := e.writes(func() { must(t, cfg.Create(ctx, a)) }); n != 0 {
		t.Errorf("second create wrote %d times", n)
	}
}

// With adopt, the one route of another protocol of the item's identity
// is replaced in place with our protocol: only that for one equal to the
// item, the item's gateway too for one that differs (a modify, never a
// delete).
func TestFakeRouteAdopt(t *testing.T) {
	e := newFakeEnv(t)
	e.withUplink()
	up := e.k.index("up0")
	e.k.addRoute(netlink.Route{Family: unix.AF_INET, Dst: ipnet("172.16.0.5/32"), Gw: net.IPv4(10, 0, 0, 1).To4(), LinkIndex: up, Protocol: unix.RTPROT_BOOT})
	e.k.addRoute(netlink.Route{Family: unix.AF_INET, Dst: ipnet("172.16.0.6/32"), Gw: net.IPv4(10, 0, 0, 1).To4(), LinkIndex: up, Protocol: unix.RTPROT_BOOT})
	same := &items.Route{Dst: pfx("172.16.0.5/32"), Gw: ip("10.0.0.1"), Dev: "up0"}
	wantNotOwned(t, "create over theirs without adopt", e.route.Create(ctx, same))
	cfg := &routeConfigurator{nlh: e.k, open: e.k.open, adopt: true}
	must(t, cfg.Create(ctx, same))
	if got := e.k.routesWith(items.RouteProtocol); len(got) != 1 || got[0].Dst.String() != "172.16.0.5/32" {
		t.Errorf("our routes after the adoption: %v", got)
	}
	if got := e.k.routesWith(unix.RTPROT_BOOT); len(got) != 1 || got[0].Dst.String() != "172.16.0.6/32" {
		t.Errorf("theirs after the adoption: %v", got)
	}
	other := &items.Route{Dst: pfx("172.16.0.6/32"), Dev: "up0"}
	must(t, cfg.Create(ctx, other))
	if got := e.k.routesWith(unix.RTPROT_BOOT); len(got) != 0 {
		t.Errorf("theirs after the second adoption: %v", got)
	}
	got := e.k.routesWith(items.RouteProtocol)
	if len(got) != 2 || got[1].Dst.String() != "172.16.0.6/32" || got[1].Gw != nil {
		t.Errorf("our routes after adopting the one that differs: %v", got)
	}
	must(t, cfg.Create(ctx, other)) // idempotent: ours now
	if got := e.k.routesWith(items.RouteProtocol); len(got) != 2 {
		t.Errorf("our routes after a second create: %v", got)
	}
}

// ApplyBatch adopts as Create does.
func TestFakeAddressAdoptBatch(t *testing.T) {
	e := newFakeEnv(t)
	a := &items.Address{Dev: "up0", Prefix: pfx("10.0.0.2/24")}
	e.k.addAddr("up0", "10.0.0.2/24", unix.RTPROT_STATIC)
	cfg := &addressConfigurator{nlh: e.k, open: e.k.open, promotes: e.k.promotes, adopt: true}
	if errs := cfg.ApplyBatch(ctx, []reconciler.BatchOp{{Op: reconciler.OpCreate, New: a}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if k, ok := e.k.addrOn("up0", "10.0.0.2/24"); !ok || !k.owned() {
		t.Fatalf("not adopted: %+v (%v)", k, ok)
	}
}
