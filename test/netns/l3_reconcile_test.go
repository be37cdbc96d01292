package netns_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/netagent/netagent/configurators/l3"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// l3StubInterfaces stands in for the interface configurator: the veth is
// already there, so interface items only need to exist in the graph.
type l3StubInterfaces struct{ calls []string }

func (s *l3StubInterfaces) Create(_ context.Context, it dg.Item) error {
	s.calls = append(s.calls, "create "+it.Name())
	return nil
}

func (s *l3StubInterfaces) Modify(_ context.Context, _, it dg.Item) error {
	s.calls = append(s.calls, "modify "+it.Name())
	return nil
}

func (s *l3StubInterfaces) Delete(_ context.Context, it dg.Item) error {
	s.calls = append(s.calls, "delete "+it.Name())
	return nil
}

func (s *l3StubInterfaces) NeedsRecreate(o, n dg.Item) bool { return items.NeedsRecreate(o, n) }

// l3Intent is a gateway's L3 configuration on the uplink up0.
func l3Intent() []dg.Item {
	v4addr := &items.Address{Dev: "up0", Prefix: l3Prefix("10.0.0.2/24")}
	v6addr := &items.Address{Dev: "up0", Prefix: l3Prefix("2001:db8::2/64")}
	return []dg.Item{
		&items.Interface{IfName: "up0", Kind: items.KindPhysical, AdminUp: true},
		v4addr, v6addr,
		&items.Address{Dev: "up0", Prefix: l3Prefix("10.0.0.3/24"), Label: "up0:svc"},
		&items.Route{Dst: l3Prefix("0.0.0.0/0"), Gw: l3Addr("10.0.0.1"), Dev: "up0", Metric: 100,
			CarrierLink: "up0", GwAddress: v4addr.Name()},
		&items.Route{Dst: l3Prefix("::/0"), Gw: l3Addr("2001:db8::1"), Dev: "up0",
			CarrierLink: "up0", GwAddress: v6addr.Name()},
		&items.Route{Dst: l3Prefix("192.0.2.0/24"), Gw: l3Addr("10.0.0.1"), Table: 100, GwAddress: v4addr.Name()},
		&items.Route{Dst: l3Prefix("198.51.100.0/24"), Kind: items.RouteBlackhole},
		&items.Rule{Priority: 100, Family: items.FamilyIPv4, From: l3Prefix("10.0.0.0/24"), Table: 100,
			Deps: []dg.ItemRef{items.InterfaceRef("up0")}},
		&items.Neighbor{Dev: "up0", IP: l3Addr("10.0.0.1"), MAC: l3MAC("02:00:00:00:00:01")},
	}
}

// l3Link is the external link item the agent would observe for up0.
func (e *l3Env) l3Link(carrier bool) *items.Link {
	l, err := e.tgt.NL.LinkByName("up0")
	if err != nil {
		e.t.Fatal(err)
	}
	return &items.Link{IfName: "up0", Index: l.Attrs().Index, Kind: "veth", AdminUp: true, OperUp: carrier, Carrier: carrier}
}

func l3Reconcile(t *testing.T, reg reconciler.Registry, current, intended *dg.Graph) reconciler.Status {
	t.Helper()
	st := reconciler.New(reg).Reconcile(context.Background(), current, intended)
	if st.Err != nil {
		t.Fatalf("reconcile: %v\n%s", st.Err, st.OperationLog)
	}
	return st
}

// l3OpIndex returns the position of "op ref" in the log, or -1.
func l3OpIndex(log reconciler.OperationLog, op reconciler.Operation, ref string) int {
	return slices.IndexFunc(log, func(e reconciler.OpLogEntry) bool { return e.Op == op && e.Ref.String() == ref })
}

func TestL3ReconcileGateway(t *testing.T) {
	e := l3NewEnv(t)
	e.ip("route", "add", "203.0.113.0/24", "dev", "up0") // foreign, placed beforehand
	foreign := fmt.Sprint(l3Find(e.l3Routes(), "dst", "203.0.113.0/24"))
	stub := &l3StubInterfaces{}
	if err := e.reg.Register(items.TypeInterface, stub); err != nil {
		t.Fatal(err)
	}
	intended := dg.New("intended", l3Intent()...)
	current := dg.New("current", e.l3Link(true))

	st := l3Reconcile(t, e.reg, current, intended)
	log := st.OperationLog
	for _, before := range [][2]string{
		{"interface/up0", "address/up0/10.0.0.2/24"},
		{"address/up0/10.0.0.2/24", "route/main 0.0.0.0/0 metric 100"},
		{"address/up0/2001:db8::2/64", "route/main ::/0 metric 1024"},
		{"interface/up0", "neighbor/up0/10.0.0.1"},
	} {
		a, b := l3OpIndex(log, reconciler.OpCreate, before[0]), l3OpIndex(log, reconciler.OpCreate, before[1])
		if a < 0 || b < 0 || a > b {
			t.Errorf("want create %s before create %s:\n%s", before[0], before[1], log)
		}
	}
	e.mustRoute("dst", "default", "gateway", "10.0.0.1", "metric", "100", "protocol", "211")
	e.mustRoute("dst", "default", "gateway", "2001:db8::1", "protocol", "211")
	e.mustRoute("dst", "192.0.2.0/24", "table", "100", "protocol", "211")
	e.mustRule("priority", "100", "src", "10.0.0.0", "table", "100", "protocol", "211")
	e.mustNeigh("dst", "10.0.0.1", "lladdr", "02:00:00:00:00:01", "protocol", "211")
	e.mustAddr("up0", "local", "10.0.0.3", "label", "up0:svc")

	// The same intent again: nothing to do.
	if st := l3Reconcile(t, e.reg, st.NewCurrentState, intended); len(st.OperationLog) != 0 {
		t.Errorf("second reconcile ran operations:\n%s", st.OperationLog)
	}

	// A restarted agent: the current state read back from the kernel (with
	// the observed link and the interface item, which other read-backs
	// give) plans nothing.
	restarted := e.l3CurrentFromKernel(intended, true)
	if st := reconciler.New(e.reg).Plan(context.Background(), restarted, intended); len(st.OperationLog) != 0 {
		t.Errorf("after a restart the plan is not empty:\n%s", st.OperationLog)
	}

	// Carrier lost: the routes out of up0 are withdrawn, nothing else.
	current = st.NewCurrentState
	current.Put(e.l3Link(false))
	st = l3Reconcile(t, e.reg, current, intended)
	for _, op := range st.OperationLog {
		if op.Op != reconciler.OpDelete || op.Ref.Type != items.TypeRoute {
			t.Errorf("carrier loss ran %s", op)
		}
	}
	if len(st.OperationLog) != 2 {
		t.Errorf("carrier loss: want the two default routes withdrawn:\n%s", st.OperationLog)
	}
	if got := l3Find(e.l3Routes(), "dst", "default", "protocol", "211"); len(got) != 0 {
		t.Errorf("default routes left without carrier: %v", got)
	}
	e.mustRoute("dst", "192.0.2.0/24", "table", "100", "protocol", "211")

	// Carrier back: the routes come back.
	st.NewCurrentState.Put(e.l3Link(true))
	st = l3Reconcile(t, e.reg, st.NewCurrentState, intended)
	e.mustRoute("dst", "default", "gateway", "10.0.0.1", "metric", "100", "protocol", "211")
	e.mustRoute("dst", "default", "gateway", "2001:db8::1", "protocol", "211")

	// A changed intent: a new gateway in place, a new neighbour MAC.
	changed := l3Intent()
	changed[4] = &items.Route{Dst: l3Prefix("0.0.0.0/0"), Gw: l3Addr("10.0.0.254"), Dev: "up0", Metric: 100,
		CarrierLink: "up0", GwAddress: "up0/10.0.0.2/24"}
	changed[9] = &items.Neighbor{Dev: "up0", IP: l3Addr("10.0.0.1"), MAC: l3MAC("02:00:00:00:00:02")}
	intended = dg.New("intended", changed...)
	st = l3Reconcile(t, e.reg, st.NewCurrentState, intended)
	for _, op := range st.OperationLog {
		if op.Op != reconciler.OpModify {
			t.Errorf("changed intent ran %s, want only modifies", op)
		}
	}
	e.mustRoute("dst", "default", "gateway", "10.0.0.254", "metric", "100", "protocol", "211")
	e.mustNeigh("dst", "10.0.0.1", "lladdr", "02:00:00:00:00:02", "protocol", "211")
	e.mustReadBack(slices.DeleteFunc(changed, func(it dg.Item) bool { return it.Type() == items.TypeInterface })...)

	// Everything goes, except the last IPv4 address of up0: the kernel
	// would flush the foreign route through up0 with it.
	st = reconciler.New(e.reg).Reconcile(context.Background(), st.NewCurrentState, dg.New("empty"))
	if !errors.Is(st.Err, l3.ErrNotOwned) {
		t.Fatalf("emptying: got %v, want the last address kept (ErrNotOwned)\n%s", st.Err, st.OperationLog)
	}
	if got := fmt.Sprint(l3Find(e.l3Routes(), "dst", "203.0.113.0/24")); got != foreign {
		t.Errorf("foreign route changed: %s, was %s", got, foreign)
	}
	e.mustAddr("up0", "local", "10.0.0.2")
	e.mustReadBackNone(items.TypeRoute, items.TypeRule, items.TypeNeighbor)

	// Once the foreign route is gone, so is the address.
	e.ip("route", "del", "203.0.113.0/24", "dev", "up0")
	l3Reconcile(t, e.reg, st.NewCurrentState, dg.New("empty"))
	e.mustReadBackNone(items.TypeAddress, items.TypeRoute, items.TypeRule, items.TypeNeighbor)
	if !slices.Contains(stub.calls, "delete up0") {
		t.Errorf("interface item not deleted: %v", stub.calls)
	}
}

// l3CurrentFromKernel builds the current state a restarted agent would:
// read-back items, the observed link, and the interface items of intended.
func (e *l3Env) l3CurrentFromKernel(intended *dg.Graph, carrier bool) *dg.Graph {
	e.t.Helper()
	g := dg.New("current", e.l3Link(carrier))
	for it := range intended.Items() {
		if it.Type() == items.TypeInterface {
			g.Put(it)
		}
	}
	for _, it := range e.readBack(intended) {
		g.Put(it)
	}
	return g
}
