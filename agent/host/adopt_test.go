package host

import (
	"context"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/configurators"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// adoptRuntime is a Runtime over fakes with the NIC eth0 and another
// tool's objects: the bridge br0 (up) with the veth v0 (peer v0p) as its
// port, the address 192.0.2.1/24 on br0, a route through it, a rule and a
// permanent neighbour (adoptIntent names each of them), and, on eth0,
// objects no intent names (unnamed).
func adoptRuntime(t *testing.T, adopt bool) (*Runtime, *configurators.Fake) {
	t.Helper()
	f := configurators.NewFake(nil)
	f.Links.AddNIC("eth0", 1500)
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}
	v0 := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "v0"}, PeerName: "v0p"}
	for _, err := range []error{f.Links.LinkAdd(br), f.Links.LinkAdd(v0)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"br0", "v0", "v0p"} {
		l, err := f.Links.LinkByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Links.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
	}
	master, _ := f.Links.LinkByName("br0")
	port, _ := f.Links.LinkByName("v0")
	if err := f.Links.LinkSetMaster(port, master); err != nil {
		t.Fatal(err)
	}
	for it := range adoptIntent().Items() {
		plant(t, f, it, unix.RTPROT_STATIC)
	}
	for _, it := range unnamed() {
		plant(t, f, it, unix.RTPROT_BOOT)
	}
	f.Links.Take()
	f.L3.Take()
	log := logrus.New()
	log.SetOutput(io.Discard)
	rt, err := OpenFakeWith(f, t.TempDir(), log, Options{Adopt: adopt})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt, f
}

// plant puts the l3 object of it in the fakes as someone else's.
func plant(t *testing.T, f *configurators.Fake, it dg.Item, proto uint8) {
	t.Helper()
	switch it.(type) {
	case *items.Address, *items.Route, *items.Rule, *items.Neighbor:
		if err := f.L3.Plant(it, proto); err != nil {
			t.Fatal(err)
		}
	}
}

// adoptIntent names every object of the other tool on br0, as it is.
func adoptIntent() *dg.Graph {
	return dg.New("intended",
		&items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true},
		&items.Interface{IfName: "v0", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "v0p"}},
		&items.Port{IfName: "v0", Master: "br0", MasterKind: items.KindBridge},
		&items.Address{Dev: "br0", Prefix: netip.MustParsePrefix("192.0.2.1/24")},
		&items.Route{Dst: netip.MustParsePrefix("198.51.100.0/24"), Gw: netip.MustParseAddr("192.0.2.254"), Dev: "br0", Metric: 100},
		&items.Rule{Family: items.FamilyIPv4, Priority: 500, From: netip.MustParsePrefix("10.61.0.0/24"), Table: 100, Action: items.RuleLookup},
		&items.Neighbor{Dev: "br0", IP: netip.MustParseAddr("192.0.2.9"), MAC: net.HardwareAddr{2, 0, 0, 0, 0, 9}},
	)
}

// unnamed are the other tool's objects on eth0 that no intent names.
func unnamed() []dg.Item {
	return []dg.Item{
		&items.Address{Dev: "eth0", Prefix: netip.MustParsePrefix("198.18.0.1/24")},
		&items.Route{Dst: netip.MustParsePrefix("198.18.5.0/24"), Gw: netip.MustParseAddr("198.18.0.254"), Dev: "eth0"},
		&items.Rule{Family: items.FamilyIPv4, Priority: 600, From: netip.MustParsePrefix("198.18.0.0/24"), Table: 200, Action: items.RuleLookup},
	}
}

// stillTheirs checks that the unnamed objects are there, someone else's
// (Clashes finds an object without netagent's mark at each).
func stillTheirs(t *testing.T, f *configurators.Fake, when string) {
	t.Helper()
	clashes, err := f.L3.Clashes(dg.New("unnamed", unnamed()...))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range unnamed() {
		if clashes[dg.Ref(it)] == nil {
			t.Errorf("%s: %s is no longer someone else's", when, dg.Ref(it))
		}
	}
}

// With Adopt, the plan over another tool's objects equal to the intent
// is only adoptions ("adopt (mark only)", no disruption, no problem);
// without, each is a clash. Apply (ApplyPredicted) names the same
// adoptions, and writes only marks: the links'
// aliases, in-place replaces of the address, route and neighbour, and
// for the rule, which has no replace, netagent's copy before theirs goes;
// no other delete. A second apply without Adopt writes nothing; the
// objects no intent names stay someone else's throughout; removing the
// intent removes exactly the adopted objects (v0's peer v0p with them).
func TestFakeAdoptMarkOnly(t *testing.T) {
	ctx := context.Background()
	plain, _ := adoptRuntime(t, false)
	if p, err := plain.Plan(ctx, adoptIntent()); err != nil || len(p.Problems) == 0 {
		t.Fatalf("plan without adopt: %v, problems %v, want the clashes", err, p.Problems)
	}
	rt, f := adoptRuntime(t, true)
	plan, err := rt.Plan(ctx, adoptIntent())
	if err != nil || len(plan.Problems) > 0 {
		t.Fatalf("plan with adopt: %v %v", err, plan.Problems)
	}
	var texts []string
	for i, e := range plan.Ops {
		texts = append(texts, OpText(e, plan.Adoptions))
		if !strings.HasPrefix(texts[i], "adopt (mark only) ") || plan.Disruptions[i].Effect != disrupt.None {
			t.Errorf("plan op %d: %q, %+v: want an adoption without disruption", i, texts[i], plan.Disruptions[i])
		}
	}
	if len(plan.Ops) != adoptIntent().Len() {
		t.Errorf("plan: %q, want one adoption per intended item (%d)", texts, adoptIntent().Len())
	}
	res, err := rt.ApplyPredicted(ctx, adoptIntent(), ApplyOptions{})
	if err != nil || !res.Converged() {
		t.Fatalf("apply with adopt: %v %v", err, res.Problems)
	}
	for i, e := range res.Ops {
		if text := OpText(e, res.Adoptions); !strings.HasPrefix(text, "adopt (mark only) ") || res.Disruptions[i].Effect != disrupt.None {
			t.Errorf("apply op %d: %q, %+v: want an adoption without disruption, as planned", i, text, res.Disruptions[i])
		}
	}
	if w := f.Links.Take(); !slices.Equal(sorted(w), []string{"alias br0", "alias v0", "alias v0p"}) {
		t.Errorf("link writes of the adoption: %v, want the three marks only", w)
	}
	sent := f.L3.Take()
	// A route's create tries an exclusive add first: the kernel refuses
	// it (EEXIST) and changes nothing.
	if want := []string{"RTM_NEWADDR replace", "RTM_NEWNEIGH replace", "RTM_NEWROUTE excl", "RTM_NEWROUTE replace", "RTM_NEWRULE", "RTM_DELRULE"}; !sameSet(sent, want) {
		t.Errorf("l3 requests of the adoption: %v, want %v", sent, want)
	}
	if i, j := slices.Index(sent, "RTM_NEWRULE"), slices.Index(sent, "RTM_DELRULE"); i > j {
		t.Errorf("their rule went before ours came: %v", sent)
	}
	stillTheirs(t, f, "after the adoption")

	if err := rt.SetAdopt(false); err != nil {
		t.Fatal(err)
	}
	again, err := rt.Apply(ctx, adoptIntent(), ApplyOptions{})
	if err != nil || !again.Converged() || len(again.Ops) > 0 {
		t.Fatalf("second apply: %v %v %v", err, again.Problems, again.Ops)
	}
	if w, s := f.Links.Take(), f.L3.Take(); len(w)+len(s) > 0 {
		t.Errorf("second apply wrote %v %v", w, s)
	}
	gone, err := rt.Apply(ctx, dg.New("intended"), ApplyOptions{})
	if err != nil || !gone.Converged() {
		t.Fatalf("apply of nothing: %v %v", err, gone.Problems)
	}
	var deleted []string
	for _, e := range gone.Ops {
		if e.Op == reconciler.OpDelete {
			deleted = append(deleted, e.Ref.String())
		}
	}
	want := []string{"interface/v0p"} // adopted with v0, whose peer it is
	for it := range adoptIntent().Items() {
		want = append(want, dg.Ref(it).String())
	}
	if !slices.Equal(sorted(deleted), sorted(want)) {
		t.Errorf("removing the intent deleted %v, want the adopted %v", deleted, want)
	}
	for _, name := range []string{"br0", "v0", "v0p"} {
		if _, err := f.Links.LinkByName(name); err == nil {
			t.Errorf("%s is still there after the intent went", name)
		}
	}
	stillTheirs(t, f, "after the intent went")
}

// With Adopt, objects of an intended identity that differ from the item
// are taken over and changed as netagent's own: the plan says "adopt and
// modify" with what the change does (the route replaced in place: atomic;
// the bridge set up), and apply writes the change without deleting them.
func TestFakeAdoptDiffers(t *testing.T) {
	ctx := context.Background()
	rt, f := adoptRuntime(t, true)
	br, _ := f.Links.LinkByName("br0")
	if err := f.Links.LinkSetDown(br); err != nil {
		t.Fatal(err)
	}
	route := &items.Route{Dst: netip.MustParsePrefix("198.51.100.0/24"), Gw: netip.MustParseAddr("192.0.2.253"), Dev: "br0", Metric: 100}
	intended := adoptIntent()
	intended.Put(route)
	f.Links.Take()
	plan, err := rt.Plan(ctx, intended)
	if err != nil || len(plan.Problems) > 0 {
		t.Fatalf("plan: %v %v", err, plan.Problems)
	}
	want := map[dg.ItemRef]disrupt.Effect{dg.Ref(route): disrupt.Atomic, items.InterfaceRef("br0"): disrupt.None}
	for i, e := range plan.Ops {
		effect, differs := want[e.Ref]
		text := OpText(e, plan.Adoptions)
		switch {
		case differs && (!strings.HasPrefix(text, "adopt and modify ") || plan.Disruptions[i].Effect != effect):
			t.Errorf("plan op %q: %+v, want an adoption that modifies, %s", text, plan.Disruptions[i], effect)
		case !differs && !strings.HasPrefix(text, "adopt (mark only) "):
			t.Errorf("plan op %q, want a mark only", text)
		}
	}
	res, err := rt.Apply(ctx, intended, ApplyOptions{})
	if err != nil || !res.Converged() {
		t.Fatalf("apply: %v %v", err, res.Problems)
	}
	for _, w := range append(f.Links.Take(), f.L3.Take()...) {
		if strings.HasPrefix(w, "del ") || w == "RTM_DELROUTE" || w == "RTM_DELADDR" {
			t.Errorf("the adoption deleted: %s", w)
		}
	}
	cur, err := rt.ReadCurrent(intended)
	if err != nil {
		t.Fatal(err)
	}
	for it := range intended.Items() {
		if got, ok := cur.Get(dg.Ref(it)); !ok || !got.Equal(it) {
			t.Errorf("after the adoption %s reads back as %v, want %v", dg.Ref(it), got, it)
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func sameSet(a, b []string) bool { return slices.Equal(sorted(a), sorted(b)) }

// An adoption equal to the intent is predicted harmless, and says what it
// writes: the mark, or nothing for objects that carry none (a bridge's
// VLAN settings, a port).
func TestPredictAdoptionsMarkOnlyText(t *testing.T) {
	vlans := &items.BridgeVLANs{IfName: "br0", Bridge: "br0"}
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true}
	ops := reconciler.OperationLog{
		{Op: reconciler.OpCreate, Ref: dg.Ref(br), Item: br},
		{Op: reconciler.OpCreate, Ref: dg.Ref(vlans), Item: vlans},
	}
	adoptions := map[dg.ItemRef]Adoption{dg.Ref(br): {Found: br, MarkOnly: true}, dg.Ref(vlans): {Found: vlans, MarkOnly: true}}
	preds := make([]disrupt.Prediction, len(ops))
	predictAdoptions(ops, preds, adoptions, nil)
	for i, want := range []string{
		"adopted: only netagent's mark is written, in place; the object is never missing",
		"adopted: nothing is written (it carries no mark of its own and equals the intent)",
	} {
		if preds[i].Why != want || preds[i].Effect != disrupt.None {
			t.Errorf("%v: %+v, want none: %q", ops[i].Ref, preds[i], want)
		}
	}
}
