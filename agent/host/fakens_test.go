package host

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// These tests run Plan, Apply and Check, and the daemon's Kernel, over
// the real configurators on fakes of a namespace (OpenFake): no root, no
// namespace. test/netns stays the reference for what the kernel does.

const forwardPath = "/proc/sys/net/ipv4/ip_forward"

// fakeRuntime is a Runtime over a fake namespace with the NIC eth0.
func fakeRuntime(t *testing.T) (*Runtime, *configurators.Fake) {
	t.Helper()
	f := configurators.NewFake(map[string]string{forwardPath: "0"})
	f.Links.AddNIC("eth0", 1500)
	log := logrus.New()
	log.SetOutput(io.Discard)
	rt, err := OpenFake(f, t.TempDir(), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt, f
}

// lanIntent is eth0 up in a bridge with an address, a route through it
// and forwarding on: items of the three configurator packages, each
// depending on the one before.
func lanIntent() *dg.Graph {
	return dg.New("intended",
		&items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true},
		&items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true},
		&items.Port{IfName: "eth0", Master: "br0", MasterKind: items.KindBridge},
		&items.Address{Dev: "br0", Prefix: netip.MustParsePrefix("192.0.2.1/24")},
		&items.Route{Dst: netip.MustParsePrefix("198.51.100.0/24"), Gw: netip.MustParseAddr("192.0.2.254"), Dev: "br0", Metric: 100},
		&items.Sysctl{Key: "net.ipv4.ip_forward", Value: "1"},
	)
}

func opNames(log reconciler.OperationLog) []string {
	var out []string
	for _, e := range log {
		out = append(out, e.Op.String()+" "+e.Ref.String())
	}
	return out
}

// Plan predicts the operations Apply then runs, in the same order; the
// fakes then hold the intent (Check) and a second Plan and Apply run
// nothing and write nothing.
func TestFakeNamespacePlanApplyCheck(t *testing.T) {
	ctx := context.Background()
	rt, f := fakeRuntime(t)
	intended := lanIntent()

	plan, err := rt.Plan(ctx, intended)
	if err != nil || !plan.Converged() {
		t.Fatalf("plan: %v %+v", err, plan.Problems)
	}
	res, err := rt.Apply(ctx, intended, ApplyOptions{})
	if err != nil || !res.Converged() {
		t.Fatalf("apply: %v %+v\n%s", err, res.Problems, res.Ops)
	}
	if got, want := opNames(res.Ops), opNames(plan.Ops); !slices.Equal(got, want) || len(got) != intended.Len() {
		t.Errorf("apply ran %v\nplan said %v", got, want)
	}
	if f.Firewall.ProcSys.Files()[forwardPath] != "1" {
		t.Errorf("ip_forward %q after apply", f.Firewall.ProcSys.Files()[forwardPath])
	}
	rep, err := rt.Check(intended)
	if err != nil || !rep.Converged() {
		t.Fatalf("check: %v %v", err, rep.Diffs)
	}

	f.Links.Take()
	if plan, err := rt.Plan(ctx, intended); err != nil || len(plan.Ops) != 0 {
		t.Errorf("second plan: %v %s", err, plan.Ops)
	}
	if res, err := rt.Apply(ctx, intended, ApplyOptions{}); err != nil || len(res.Ops) != 0 || !res.Converged() {
		t.Errorf("second apply: %v %s", err, res.Ops)
	}
	if w := f.Links.Take(); len(w) != 0 {
		t.Errorf("second apply wrote %v", w)
	}
}

// Someone sets the bridge down: Check reports it, and the daemon's
// Kernel repairs it with its records through Converge; the address and
// the route on the bridge are still there (the kernel keeps them on a
// link set down, and so does the fake).
func TestFakeNamespaceDriftRepaired(t *testing.T) {
	ctx := context.Background()
	rt, f := fakeRuntime(t)
	intended := lanIntent()
	if res, err := rt.Apply(ctx, intended, ApplyOptions{}); err != nil || !res.Converged() {
		t.Fatalf("apply: %v %+v", err, res)
	}
	br, err := f.Links.LinkByName("br0")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Links.LinkSetDown(br); err != nil {
		t.Fatal(err)
	}
	rep, err := rt.Check(intended)
	if err != nil || len(rep.Diffs) != 1 || rep.Diffs[0].Ref != dg.Ref(&items.Interface{IfName: "br0"}) {
		t.Fatalf("check after drift: %v %v", err, rep.Diffs)
	}
	k := rt.Kernel()
	res, err := Converge(ctx, k, intended)
	if err != nil || !res.Converged() || len(res.Ops) != 1 {
		t.Fatalf("repair: %v %+v\n%s", err, res.Problems, res.Ops)
	}
	if l, _ := f.Links.LinkByName("br0"); l.Attrs().Flags&net.FlagUp == 0 {
		t.Error("br0 still down after the repair")
	}
	if rep, err := rt.Check(intended); err != nil || !rep.Converged() {
		t.Errorf("check after repair: %v %v", err, rep.Diffs)
	}
	links, err := k.ReadLinks(ctx)
	if err != nil || !slices.ContainsFunc(links, func(l *items.Link) bool { return l.IfName == "eth0" && l.Index == 2 }) {
		t.Errorf("the daemon's links: %v %v, want eth0 (index 2)", err, links)
	}
}

// Someone else's bridge br0 is there: Plan predicts, from the fakes
// (Clashes), the failure Apply then meets, with the same problems, and
// Apply leaves that bridge alone.
func TestFakeNamespacePlanPredictsClash(t *testing.T) {
	ctx := context.Background()
	rt, f := fakeRuntime(t)
	if err := f.Links.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}); err != nil {
		t.Fatal(err)
	}
	f.Links.Take()
	intended := lanIntent()
	plan, err := rt.Plan(ctx, intended)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rt.Apply(ctx, intended, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	br := dg.Ref(&items.Interface{IfName: "br0"})
	if !slices.ContainsFunc(plan.Problems, func(p Problem) bool {
		return p.Ref == br && !p.Blocked && strings.Contains(p.Reason, link.ErrNotOwned.Error())
	}) {
		t.Errorf("plan's problems %v, want br0 failed: %v", plan.Problems, link.ErrNotOwned)
	}
	if got, want := fmt.Sprint(res.Problems), fmt.Sprint(plan.Problems); got != want {
		t.Errorf("apply's problems\n%s\nplan's\n%s", got, want)
	}
	if w := f.Links.Take(); slices.ContainsFunc(w, func(op string) bool { return strings.HasSuffix(op, " br0") }) {
		t.Errorf("apply wrote to someone else's br0: %v", w)
	}
}
