package host

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

var (
	uplink  = &items.Interface{IfName: "uplink", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "peer0"}}
	upAddr  = &items.Address{Dev: "uplink", Prefix: netip.MustParsePrefix("192.0.2.10/24")}
	defRt   = &items.Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gw: netip.MustParseAddr("192.0.2.1"), Dev: "uplink"}
	lanIf   = &items.Interface{IfName: "lan", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "peer1"}}
	upNeigh = &items.Neighbor{Dev: "uplink", IP: netip.MustParseAddr("192.0.2.1")}
)

func op(o reconciler.Operation, it dg.Item, recreate bool) reconciler.OpLogEntry {
	return reconciler.OpLogEntry{Ref: dg.Ref(it), Item: it, Op: o, Recreate: recreate}
}

func whys(rs []Refusal) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Why)
	}
	return out
}

func TestJudgeRefusesRemovalsOfAFlagProtectedLink(t *testing.T) {
	cur := dg.New("current", uplink, upAddr, defRt, upNeigh, lanIf)
	ops := reconciler.OperationLog{
		op(reconciler.OpDelete, defRt, false),
		op(reconciler.OpDelete, upNeigh, false),
		op(reconciler.OpDelete, upAddr, false),
		op(reconciler.OpDelete, uplink, false),
		op(reconciler.OpDelete, lanIf, false), // not protected: runs
	}
	orphans, refused := Judge(ops, cur, dg.New("intended"), Protection{Flags: []string{"uplink"}})
	if len(orphans) != 0 {
		t.Errorf("orphans %v: --protect refuses removals", orphans)
	}
	want := []string{
		"route 0.0.0.0/0 via 192.0.2.1 dev uplink would be withdrawn: uplink is protected",
		"neighbour 192.0.2.1 on uplink would be removed: uplink is protected",
		"address 192.0.2.10/24 on uplink would be removed: uplink is protected",
		"interface uplink would be deleted: uplink is protected",
	}
	if got := whys(refused); !slices.Equal(got, want) {
		t.Errorf("refused:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestJudgeOrphansRemovalsOfAnIntentProtectedLink(t *testing.T) {
	cur := dg.New("current", uplink, upAddr, defRt)
	ops := reconciler.OperationLog{
		op(reconciler.OpDelete, defRt, false),
		op(reconciler.OpDelete, upAddr, false),
		op(reconciler.OpDelete, uplink, false),
	}
	orphans, refused := Judge(ops, cur, dg.New("intended"), Protection{Intent: []string{"uplink"}})
	if len(refused) != 0 {
		t.Errorf("refused %v: removals from the intent of what it protected are orphaned", whys(refused))
	}
	if len(orphans) != 3 {
		t.Fatalf("orphans %v, want the route, the address and the interface", orphans)
	}
	if got := orphans[0].Reason; got != "no longer in the intent; deleting it would withdraw route 0.0.0.0/0 via 192.0.2.1 dev uplink: uplink is protected" {
		t.Errorf("reason %q", got)
	}
}

// A recreate cannot be orphaned: the intent still wants the object, in a
// form the kernel makes only by deleting it. A parent's recreate cascades
// to the protected VLAN above it, and the parent itself is named too.
func TestJudgeRefusesARecreateCascadeFromTheParent(t *testing.T) {
	parent := &items.Interface{IfName: "bond0", Kind: items.KindBond, AdminUp: true, Attrs: &items.BondAttrs{Mode: "active-backup"}}
	vlan := &items.Interface{IfName: "bond0.100", Kind: items.KindVLAN, AdminUp: true, Attrs: &items.VLANAttrs{Parent: "bond0", ID: 100}}
	addr := &items.Address{Dev: "bond0.100", Prefix: netip.MustParsePrefix("192.0.2.10/24")}
	newParent := &items.Interface{IfName: "bond0", Kind: items.KindBond, AdminUp: true, Attrs: &items.BondAttrs{Mode: "802.3ad"}}
	cur := dg.New("current", parent, vlan, addr)
	intended := dg.New("intended", newParent, vlan, addr)
	ops := reconciler.OperationLog{
		op(reconciler.OpDelete, addr, true),
		op(reconciler.OpDelete, vlan, true),
		op(reconciler.OpDelete, parent, true),
		op(reconciler.OpCreate, newParent, true),
		op(reconciler.OpCreate, vlan, true),
		op(reconciler.OpCreate, addr, true),
	}
	orphans, refused := Judge(ops, cur, intended, Protection{Intent: []string{"bond0.100"}})
	if len(orphans) != 0 {
		t.Errorf("orphans %v", orphans)
	}
	want := []string{
		"address 192.0.2.10/24 on bond0.100 would be recreated (deleted and created again): bond0.100 is protected",
		"interface bond0.100 would be recreated (deleted and created again): bond0.100 is protected",
		"interface bond0 would be recreated (deleted and created again): bond0.100 is protected (bond0 is below bond0.100)",
	}
	if got := whys(refused); !slices.Equal(got, want) {
		t.Errorf("refused:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestJudgeRoutesThroughTheLink(t *testing.T) {
	multi := &items.Route{Dst: netip.MustParsePrefix("198.51.100.0/24"), Nexthops: []items.Nexthop{
		{Gw: netip.MustParseAddr("192.0.2.1"), Dev: "uplink"}, {Gw: netip.MustParseAddr("203.0.113.1"), Dev: "lan"}}}
	narrowed := &items.Route{Dst: multi.Dst, Gw: netip.MustParseAddr("203.0.113.1"), Dev: "lan"}
	viaGw := &items.Route{Dst: netip.MustParsePrefix("10.0.0.0/8"), Gw: netip.MustParseAddr("192.0.2.254"), GwAddress: upAddr.Name()}
	moved := &items.Route{Dst: defRt.Dst, Gw: netip.MustParseAddr("203.0.113.1"), Dev: "lan"}
	newGw := &items.Route{Dst: defRt.Dst, Gw: netip.MustParseAddr("192.0.2.2"), Dev: "uplink"}
	lanOnly := &items.Route{Dst: netip.MustParsePrefix("203.0.113.0/24"), Dev: "lan", Scope: items.ScopeLink}
	cur := dg.New("current", uplink, upAddr, lanIf, multi, viaGw, defRt, lanOnly)
	intended := dg.New("intended", uplink, upAddr, lanIf, narrowed, moved)
	ops := reconciler.OperationLog{
		op(reconciler.OpModify, narrowed, false), // a nexthop on uplink dropped
		op(reconciler.OpDelete, viaGw, false),    // its gateway is reached through uplink
		op(reconciler.OpModify, moved, false),    // the default route moves to lan
		op(reconciler.OpDelete, lanOnly, false),  // nothing to do with uplink
	}
	_, refused := Judge(ops, cur, intended, Protection{Flags: []string{"uplink"}})
	want := []string{
		"route 198.51.100.0/24 nexthop via 192.0.2.1 dev uplink nexthop via 203.0.113.1 dev lan would be moved off uplink (to route 198.51.100.0/24 via 203.0.113.1 dev lan): uplink is protected",
		"route 10.0.0.0/8 via 192.0.2.254 would be withdrawn: uplink is protected",
		"route 0.0.0.0/0 via 192.0.2.1 dev uplink would be moved off uplink (to route 0.0.0.0/0 via 203.0.113.1 dev lan): uplink is protected",
	}
	if got := whys(refused); !slices.Equal(got, want) {
		t.Errorf("refused:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A new gateway on the same link is no withdrawal (probes judge it).
	_, refused = Judge(reconciler.OperationLog{op(reconciler.OpModify, newGw, false)}, cur, intended, Protection{Flags: []string{"uplink"}})
	if len(refused) != 0 {
		t.Errorf("a gateway change on the link refused: %v", whys(refused))
	}
}

func TestJudgeSetDownAndPortChanges(t *testing.T) {
	down := &items.Interface{IfName: "uplink", Kind: items.KindVeth, Attrs: &items.VethAttrs{Peer: "peer0"}}
	mtu := &items.Interface{IfName: "uplink", Kind: items.KindVeth, AdminUp: true, MTU: 1400, Attrs: &items.VethAttrs{Peer: "peer0"}}
	port := &items.Port{IfName: "eth0", Master: "bond0", MasterKind: items.KindBond}
	moved := &items.Port{IfName: "eth0", Master: "br0", MasterKind: items.KindBridge}
	cur := dg.New("current", uplink, port)
	p := Protection{Flags: []string{"uplink", "eth0"}}
	_, refused := Judge(reconciler.OperationLog{op(reconciler.OpModify, down, false), op(reconciler.OpModify, moved, false)}, cur, nil, p)
	want := []string{
		"interface uplink would be set down: uplink is protected",
		"port eth0 of bond0 would move to br0: eth0 is protected",
	}
	if got := whys(refused); !slices.Equal(got, want) {
		t.Errorf("refused:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Its master recreated: the port is released and enslaved again.
	_, refused = Judge(reconciler.OperationLog{op(reconciler.OpDelete, port, true), op(reconciler.OpCreate, port, true)}, cur, nil, p)
	want = []string{"port eth0 of bond0 would be recreated (deleted and created again): eth0 is protected"}
	if got := whys(refused); !slices.Equal(got, want) {
		t.Errorf("refused %v, want %v", got, want)
	}
	_, refused = Judge(reconciler.OperationLog{op(reconciler.OpModify, mtu, false), op(reconciler.OpDelete, port, false)}, cur, nil, p)
	want = []string{"port eth0 of bond0 would leave bond0: eth0 is protected"}
	if got := whys(refused); !slices.Equal(got, want) {
		t.Errorf("refused %v, want %v (an MTU change disrupts nothing)", got, want)
	}
}

// fakeConf plans like the configurators: interfaces recreate as items
// say; nothing runs in a dry run.
type fakeConf struct{}

func (fakeConf) Create(context.Context, dg.Item) error          { return nil }
func (fakeConf) Modify(context.Context, dg.Item, dg.Item) error { return nil }
func (fakeConf) Delete(context.Context, dg.Item) error          { return nil }
func (fakeConf) NeedsRecreate(o, n dg.Item) bool {
	oi, ok := o.(*items.Interface)
	return ok && items.InterfaceNeedsRecreate(oi, n.(*items.Interface))
}

func fakePlanner(t *testing.T) *reconciler.Reconciler {
	t.Helper()
	reg := &reconciler.TypeRegistry{}
	for _, typ := range []string{items.TypeInterface, items.TypeAddress, items.TypeRoute, items.TypeNeighbor, items.TypePort} {
		if err := reg.Register(typ, fakeConf{}); err != nil {
			t.Fatal(err)
		}
	}
	return reconciler.New(reg)
}

// Removing the intent-protected uplink from the intent keeps it and what
// is on it, as the kernel holds them; the apply of the result plans
// nothing for them, and the unprotected lan goes.
func TestGuardPlanKeepsOrphans(t *testing.T) {
	ctx := context.Background()
	rec := fakePlanner(t)
	cur := dg.New("current", uplink, upAddr, defRt, upNeigh, lanIf)
	intended := dg.New("intended")
	g := GuardPlan(ctx, rec, cur, intended, Protection{Intent: []string{"uplink"}})
	if len(g.Refused) != 0 {
		t.Fatalf("refused: %v", whys(g.Refused))
	}
	var got []string
	for _, o := range g.Orphans {
		got = append(got, o.Ref.String())
	}
	want := []string{dg.Ref(upAddr).String(), dg.Ref(uplink).String(), dg.Ref(upNeigh).String(), dg.Ref(defRt).String()}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("orphans %v, want %v", got, want)
	}
	if intended.Len() != 0 {
		t.Errorf("the caller's graph was changed: %v", intended.Refs())
	}
	st := rec.Plan(ctx, cur, g.Intended)
	if len(st.OperationLog) != 1 || st.OperationLog[0].Ref != dg.Ref(lanIf) || st.OperationLog[0].Op != reconciler.OpDelete {
		t.Errorf("plan with the orphans kept:\n%v\nwant only the delete of interface/lan", st.OperationLog)
	}
	// Declared again (adopted), nothing is orphaned and nothing runs.
	again := dg.New("intended", uplink, upAddr, defRt, upNeigh, lanIf)
	g = GuardPlan(ctx, rec, cur, again, Protection{Intent: []string{"uplink"}})
	if len(g.Orphans) != 0 || len(g.Refused) != 0 || g.Intended != again {
		t.Errorf("adopting: orphans %v, refused %v", g.Orphans, whys(g.Refused))
	}
	if st := rec.Plan(ctx, cur, again); len(st.OperationLog) != 0 {
		t.Errorf("adopting plans %v", st.OperationLog)
	}
}

// With --protect the same removal is refused, and nothing is orphaned.
func TestGuardPlanRefusesWithFlag(t *testing.T) {
	cur := dg.New("current", uplink, upAddr, defRt)
	g := GuardPlan(context.Background(), fakePlanner(t), cur, dg.New("intended"), Protection{Flags: []string{"uplink"}})
	if len(g.Orphans) != 0 || len(g.Refused) != 3 {
		t.Errorf("orphans %v, refused %v", g.Orphans, whys(g.Refused))
	}
	err := error(&RefusedError{Refused: g.Refused})
	if !strings.Contains(err.Error(), "interface uplink would be deleted: uplink is protected") {
		t.Errorf("error %q", err)
	}
}

func TestProtectionRemembered(t *testing.T) {
	rt := &Runtime{stateDir: t.TempDir()}
	withUplink := dg.New("intended", uplink)
	none := Declares(dg.New("intended"))
	p, err := rt.Protection([]string{"eth9"}, []string{"uplink"}, Declares(withUplink))
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Remember(p, Declares(withUplink), dg.New("current", uplink), false); err != nil {
		t.Fatal(err)
	}
	// Left out of the next intent: still protected by the intent.
	p, _ = rt.Protection(nil, nil, none)
	if !slices.Equal(p.Intent, []string{"uplink"}) || len(p.Flags) != 0 {
		t.Errorf("protection %+v, want the remembered uplink", p)
	}
	// Declared again without "protected": no longer.
	p, _ = rt.Protection(nil, nil, Declares(withUplink))
	if len(p.Intent) != 0 {
		t.Errorf("protection %+v: the intent lifted it", p)
	}
	// --force deletes the orphans and forgets them.
	p, _ = rt.Protection(nil, nil, none)
	if err := rt.Remember(p, none, dg.New("current", uplink), true); err != nil {
		t.Fatal(err)
	}
	if p, _ = rt.Protection(nil, nil, none); len(p.Intent) != 0 {
		t.Errorf("protection %+v after --force", p)
	}
}

// An intent-protected NIC that netagent never changed (read back as a
// link only) leaves the intent with its address and route: they are kept,
// and so is the NIC they need, as the kernel holds it; nothing is refused
// ("would be recreated") and the plan of what the read-back then holds
// runs nothing.
func TestGuardPlanKeepsTheNICOrphansNeed(t *testing.T) {
	ctx := context.Background()
	rec := fakePlanner(t)
	nic := &items.Link{IfName: "uplink", AdminUp: true}
	cur := dg.New("current", nic, upAddr, defRt)
	g := GuardPlan(ctx, rec, cur, dg.New("intended"), Protection{Intent: []string{"uplink"}})
	if len(g.Refused) != 0 {
		t.Fatalf("refused: %v", whys(g.Refused))
	}
	var got []string
	for _, o := range g.Orphans {
		got = append(got, o.Ref.String())
	}
	want := []string{dg.Ref(upAddr).String(), "interface/uplink", dg.Ref(defRt).String()}
	if !slices.Equal(got, want) {
		t.Errorf("orphans %v, want %v", got, want)
	}
	kept, ok := g.Intended.Get(items.InterfaceRef("uplink"))
	if want := (&items.Interface{IfName: "uplink", Kind: items.KindPhysical, AdminUp: true}); !ok || !kept.Equal(want) {
		t.Errorf("kept %v, want %v", kept, want)
	}
	if cur.Contains(items.InterfaceRef("uplink")) {
		t.Error("the caller's current state was changed")
	}
	readBack := dg.New("current", nic, kept, upAddr, defRt)
	if st := rec.Plan(ctx, readBack, g.Intended); len(st.OperationLog) != 0 {
		t.Errorf("plan with the orphans kept: %v", st.OperationLog)
	}
}

// A protected NIC that is a bridge's port leaves the intent with the
// bridge: the port is kept, and the bridge it needs too (without what
// only it carries), instead of a refused recreate of the port.
func TestGuardPlanKeepsTheMasterOfAnOrphanPort(t *testing.T) {
	ctx := context.Background()
	rec := fakePlanner(t)
	eth := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true}
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true}
	port := &items.Port{IfName: "eth0", Master: "br0", MasterKind: items.KindBridge}
	brAddr := &items.Address{Dev: "br0", Prefix: netip.MustParsePrefix("192.0.2.10/24")}
	cur := dg.New("current", &items.Link{IfName: "eth0", AdminUp: true}, eth, br, port, brAddr)
	g := GuardPlan(ctx, rec, cur, dg.New("intended"), Protection{Intent: []string{"eth0"}})
	if len(g.Refused) != 0 {
		t.Fatalf("refused: %v", whys(g.Refused))
	}
	if !g.Intended.Contains(dg.Ref(br)) || !g.Intended.Contains(dg.Ref(port)) {
		t.Fatalf("kept %v, want the port and its bridge", g.Intended.Refs())
	}
	st := rec.Plan(ctx, cur, g.Intended)
	if len(st.OperationLog) != 1 || st.OperationLog[0].Ref != dg.Ref(brAddr) || st.OperationLog[0].Op != reconciler.OpDelete {
		t.Errorf("plan with the orphans kept: %v, want only the delete of the bridge's address", st.OperationLog)
	}
}

// The last port leaving a protected bridge takes the bridge's carrier:
// refused with --protect, orphaned (kept in the bridge) when the intent
// protected the bridge; a port whose bridge keeps another is not judged.
func TestJudgeLastPortOfAProtectedBridge(t *testing.T) {
	cur, ops := bothPortsLeave()
	br, _ := cur.Get(items.InterfaceRef("br0"))
	p2 := ops[1].Item
	orphans, refused := Judge(ops, cur, dg.New("intended", br), Protection{Flags: []string{"br0"}})
	if want := []string{"port p2 of br0, its last port, would leave br0: br0 is protected"}; len(orphans) != 0 || !slices.Equal(whys(refused), want) {
		t.Errorf("--protect: orphans %v, refused %v, want %v", orphans, whys(refused), want)
	}
	orphans, refused = Judge(ops, cur, dg.New("intended", br), Protection{Intent: []string{"br0"}})
	if len(refused) != 0 || len(orphans) != 1 || orphans[0].Ref != dg.Ref(p2) {
		t.Errorf("protected by the intent: orphans %v, refused %v, want port/p2 orphaned", orphans, whys(refused))
	}
}

// A veth set down or deleted takes its peer down: a protected peer is
// judged as if the operation were its own.
func TestJudgeVethPeerGoesDownWithIt(t *testing.T) {
	down := &items.Interface{IfName: "uplink", Kind: items.KindVeth, AdminUp: false, Attrs: &items.VethAttrs{Peer: "peer0"}}
	cur := dg.New("current", uplink)
	_, refused := Judge(reconciler.OperationLog{op(reconciler.OpModify, down, false)}, cur, dg.New("intended", down), Protection{Flags: []string{"peer0"}})
	if want := []string{"interface uplink would be set down: peer0 is protected (peer0 goes down with uplink)"}; !slices.Equal(whys(refused), want) {
		t.Errorf("set down: refused %v, want %v", whys(refused), want)
	}
	_, refused = Judge(reconciler.OperationLog{op(reconciler.OpDelete, uplink, false)}, cur, dg.New("intended"), Protection{Flags: []string{"peer0"}})
	if want := []string{"interface uplink would be deleted: peer0 is protected (peer0 goes down with uplink)"}; !slices.Equal(whys(refused), want) {
		t.Errorf("deleted: refused %v, want %v", whys(refused), want)
	}
}
