package link

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

func vset(rs ...items.VLANRange) items.VLANSet { return items.VLANSet(rs) }
func vr(from, to uint16, pvid, untagged bool) items.VLANRange {
	return items.VLANRange{From: from, To: to, PVID: pvid, Untagged: untagged}
}
func prio(p uint16) *uint16 { return &p }

// vlansOf is the fake kernel's membership of a link, canonical.
func (e fakeEnv) vlansOf(name string) items.VLANSet {
	e.t.Helper()
	fl := e.f.byName(name)
	if fl == nil {
		e.t.Fatalf("no link %s", name)
	}
	return items.CanonicalVLANs(fl.bm.vlans)
}

// bridgeVLANScene is a filtering bridge br0 with veth ports v0 and v2.
type bridgeVLANScene struct {
	br, v0, v2 *items.Interface
	p0, p2     *items.Port
}

func newBridgeVLANScene() bridgeVLANScene {
	return bridgeVLANScene{
		br: &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true, Attrs: &items.BridgeAttrs{VLANFiltering: true}},
		v0: &items.Interface{IfName: "v0", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "v1"}},
		v2: &items.Interface{IfName: "v2", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "v3"}},
		p0: &items.Port{IfName: "v0", Master: "br0", MasterKind: items.KindBridge},
		p2: &items.Port{IfName: "v2", Master: "br0", MasterKind: items.KindBridge},
	}
}

func (s bridgeVLANScene) with(extra ...dg.Item) []dg.Item {
	return append([]dg.Item{s.br, s.v0, s.v2, s.p0, s.p2}, extra...)
}

// TestFakeBridgeVLANs: a port's and the bridge's own VLANs are created,
// changed in place as a diff (the pvid moves, VLANs come and go, one add
// and one delete request), and given back the kernel's default when the
// item goes; a second run writes nothing and read-back equals the intent.
func TestFakeBridgeVLANs(t *testing.T) {
	e := newFakeEnv(t)
	s := newBridgeVLANScene()
	self := &items.BridgeVLANs{IfName: "br0", Bridge: "br0", VLANs: vset(vr(10, 10, true, true), vr(20, 20, false, false))}
	port := &items.BridgeVLANs{IfName: "v0", Bridge: "br0",
		VLANs: vset(vr(10, 10, true, true), vr(20, 30, false, false), vr(40, 40, false, true))}
	e.converge(s.with(self, port)...)
	if got := e.vlansOf("v0"); !slices.Equal(got, port.VLANs) {
		t.Errorf("v0 vlans %s, want %s", got, port.VLANs)
	}
	if got := e.vlansOf("br0"); !slices.Equal(got, self.VLANs) {
		t.Errorf("br0 vlans %s, want %s", got, self.VLANs)
	}
	if got := e.vlansOf("v2"); !slices.Equal(got, items.DefaultVLANs(1)) {
		t.Errorf("v2 (no vlans declared) %s, want the default", got)
	}

	// In place: the pvid moves to 20, 25-30 and 40 go, 50 comes.
	port2 := &items.BridgeVLANs{IfName: "v0", Bridge: "br0",
		VLANs: vset(vr(10, 10, false, false), vr(20, 20, true, true), vr(21, 24, false, false), vr(50, 50, false, false))}
	st := e.apply(s.with(self, port2)...)
	if got := opsOf(st.OperationLog); !slices.Equal(got, []string{"modify v0"}) || st.Err != nil {
		t.Errorf("ops %v err %v, want one modify", got, st.Err)
	}
	if w := e.f.Take(); !slices.Equal(w, []string{"vlan-add v0", "vlan-del v0"}) {
		t.Errorf("writes %v, want one add and one delete", w)
	}
	if got := e.vlansOf("v0"); !slices.Equal(got, port2.VLANs) {
		t.Errorf("v0 vlans %s, want %s", got, port2.VLANs)
	}
	e.converge(s.with(self, port2)...)

	// The sections go: both members get the kernel's default back.
	st = e.apply(s.with()...)
	if got := opsOf(st.OperationLog); len(got) != 2 || st.Err != nil {
		t.Errorf("ops %v err %v, want two deletes", got, st.Err)
	}
	e.converge(s.with()...)
	for _, name := range []string{"br0", "v0"} {
		if got := e.vlansOf(name); !slices.Equal(got, items.DefaultVLANs(1)) {
			t.Errorf("%s after its vlans went: %s, want the default", name, got)
		}
	}

	// The empty set: no VLAN at all, and it reads back as such.
	none := &items.BridgeVLANs{IfName: "v0", Bridge: "br0", VLANs: items.VLANSet{}}
	e.converge(s.with(none)...)
	if got := e.vlansOf("v0"); len(got) != 0 {
		t.Errorf("v0 with the empty set: %s", got)
	}

	// The port leaves the bridge: the kernel drops its VLANs with it.
	e.converge(s.br, s.v0, s.v2, s.p2)
	if e.f.byName("v0").bm.vlans != nil {
		t.Errorf("released v0 keeps vlans %v", e.f.byName("v0").bm.vlans)
	}
}

// TestFakeBridgeVLANDrift: VLANs someone added to a declared member, or to
// a member of netagent's bridge the intent declares none for, are taken
// away by the next apply; a write the kernel refuses fails the item and
// the next apply repairs it.
func TestFakeBridgeVLANDrift(t *testing.T) {
	e := newFakeEnv(t)
	s := newBridgeVLANScene()
	port := &items.BridgeVLANs{IfName: "v0", Bridge: "br0", VLANs: vset(vr(10, 10, true, true))}
	e.converge(s.with(port)...)
	for _, name := range []string{"v0", "v2"} {
		if err := e.f.setBridgeVLANs(e.link(name).Attrs().Index, false, false, vset(vr(99, 99, true, false))); err != nil {
			t.Fatal(err)
		}
	}
	e.f.Take()
	st := e.apply(s.with(port)...)
	if got := opsOf(st.OperationLog); !slices.Equal(got, []string{"delete v2", "modify v0"}) && !slices.Equal(got, []string{"modify v0", "delete v2"}) {
		t.Errorf("ops %v, want the modify of v0 and the delete of v2's", got)
	}
	if got := e.vlansOf("v0"); !slices.Equal(got, port.VLANs) {
		t.Errorf("v0 after the drift: %s", got)
	}
	if got := e.vlansOf("v2"); !slices.Equal(got, items.DefaultVLANs(1)) {
		t.Errorf("v2 after the drift: %s", got)
	}

	port2 := &items.BridgeVLANs{IfName: "v0", Bridge: "br0", VLANs: vset(vr(11, 11, true, true))}
	e.f.fail = func(op, name string) error {
		if op == "vlan-add" {
			return unix.ENOMEM
		}
		return nil
	}
	if st := e.apply(s.with(port2)...); !errors.Is(st.Err, unix.ENOMEM) {
		t.Errorf("refused add: %v", st.Err)
	}
	e.f.fail = nil
	e.converge(s.with(port2)...)
	if got := e.vlansOf("v0"); !slices.Equal(got, port2.VLANs) {
		t.Errorf("v0 after the repair: %s", got)
	}
}

// TestFakePortCostPriority: cost and priority are written in one request
// when they differ, priority 0 included; unset, they are left as the
// kernel holds them and read back unset.
func TestFakePortCostPriority(t *testing.T) {
	e := newFakeEnv(t)
	s := newBridgeVLANScene()
	p0 := &items.Port{IfName: "v0", Master: "br0", MasterKind: items.KindBridge, Cost: 100, Priority: prio(0)}
	s.p0 = p0
	e.converge(s.with()...)
	if fl := e.f.byName("v0"); fl.cost != 100 || fl.bm.priority != 0 {
		t.Errorf("v0 cost %d priority %d", fl.cost, fl.bm.priority)
	}
	s.p0 = &items.Port{IfName: "v0", Master: "br0", MasterKind: items.KindBridge, Cost: 100, Priority: prio(63)}
	e.apply(s.with()...)
	if w := e.f.Take(); !slices.Equal(w, []string{"slave-data v0"}) {
		t.Errorf("writes %v, want one slave-data", w)
	}
	// Unset: left as is.
	s.p0 = &items.Port{IfName: "v0", Master: "br0", MasterKind: items.KindBridge}
	if w := e.converge(s.with()...); len(w) != 0 {
		t.Errorf("unsetting cost and priority wrote %v", w)
	}
	if fl := e.f.byName("v0"); fl.cost != 100 || fl.bm.priority != 63 {
		t.Errorf("v0 cost %d priority %d after unsetting, want them kept", fl.cost, fl.bm.priority)
	}
	// The kernel refuses what is out of its range.
	pc := &PortConfigurator{k: &kernel{nl: e.f, raw: e.f, ns: e.f}}
	bad := &items.Port{IfName: "v0", Master: "br0", MasterKind: items.KindBridge, Priority: prio(64)}
	if err := pc.Create(context.Background(), bad); !errors.Is(err, unix.ERANGE) {
		t.Errorf("priority 64: %v, want ERANGE", err)
	}
}

// TestFakeBridgeVLANsForeign: the VLANs of a bridge netagent does not own,
// and of its ports, are never read back nor written (ErrNotOwned); a
// member that is not a port of the bridge is ErrMissing, and its delete
// is a no-op.
func TestFakeBridgeVLANsForeign(t *testing.T) {
	e := newFakeEnv(t)
	e.f.AddNIC("eth1", 1500)
	if err := e.f.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "docker0"}}); err != nil {
		t.Fatal(err)
	}
	if err := e.f.LinkSetMaster(e.link("eth1"), e.link("docker0")); err != nil {
		t.Fatal(err)
	}
	if err := e.f.setBridgeVLANs(e.link("eth1").Attrs().Index, false, false, vset(vr(5, 5, true, false))); err != nil {
		t.Fatal(err)
	}
	before := maps.Clone(e.f.byName("eth1").bm.vlans)
	s := newBridgeVLANScene()
	e.converge(s.with()...)
	got, err := e.kernel().readBack(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range got {
		if b, ok := it.(*items.BridgeVLANs); ok && (b.Bridge == "docker0") {
			t.Errorf("read back a foreign bridge's vlans: %s", b)
		}
	}
	c := &BridgeVLANConfigurator{k: &kernel{nl: e.f, raw: e.f, ns: e.f}}
	foreign := &items.BridgeVLANs{IfName: "eth1", Bridge: "docker0", VLANs: vset(vr(7, 7, false, false))}
	for name, err := range map[string]error{
		"create": c.Create(context.Background(), foreign),
		"delete": c.Delete(context.Background(), foreign),
	} {
		if !errors.Is(err, ErrNotOwned) {
			t.Errorf("%s on a foreign bridge: %v, want ErrNotOwned", name, err)
		}
	}
	notPort := &items.BridgeVLANs{IfName: "eth1", Bridge: "br0", VLANs: vset(vr(7, 7, false, false))}
	if err := c.Create(context.Background(), notPort); !errors.Is(err, ErrMissing) {
		t.Errorf("vlans of a link that is not a port: %v, want ErrMissing", err)
	}
	if err := c.Delete(context.Background(), notPort); err != nil {
		t.Errorf("deleting vlans of a link that is not a port: %v", err)
	}
	if w := e.f.Take(); len(w) != 0 || !maps.Equal(before, e.f.byName("eth1").bm.vlans) {
		t.Errorf("foreign port written: %v, vlans %v", w, e.f.byName("eth1").bm.vlans)
	}
}

// The VLAN requests encode as `bridge vlan` sends them: a flags attribute
// (self or master), a single VID as one entry, a range as a begin and an
// end entry with the same flags; the kernel's reading of a request
// (vlanInfoRanges) gives the ranges back, and the compressed dump parser
// reads the same form into the member's table.
func TestBridgeVLANSpecRoundTrip(t *testing.T) {
	set := vset(vr(1, 1, true, true), vr(20, 30, false, true), vr(31, 4093, false, false), vr(4094, 4094, false, true))
	for _, self := range []bool{false, true} {
		spec := bridgeVLANSpec(self, set).Serialize()
		// The flags, two singles and two ranges of two entries each.
		if n := (len(spec) - unix.SizeofRtAttr) / 8; n != 1+2+2*2 {
			t.Errorf("self %v: %d attributes, want 7", self, n)
		}
		got, err := vlanInfoRanges(spec[unix.SizeofRtAttr:])
		if err != nil || !slices.Equal(got, set) {
			t.Errorf("self %v: read as %s (%v), want %s", self, items.VLANSet(got), err, set)
		}
		msg := append(make([]byte, unix.SizeofIfInfomsg), spec...)
		msg[4] = 7 // ifi_index, little-endian
		out := map[int]*vlanTable{}
		if err := parseBridgeVLANs(msg, out); err != nil {
			t.Fatal(err)
		}
		if got := out[7].set(); !slices.Equal(got, set) {
			t.Errorf("self %v: parsed %s, want %s", self, got, set)
		}
	}
}

// The kernel's reading of a request refuses what br_afspec refuses: a
// begin without an end, an end without a begin, a range of other flags
// at its two ends or a pvid on it, a VID outside 1-4094.
func TestVLANInfoRangesRefused(t *testing.T) {
	const begin, end = nl.BRIDGE_VLAN_INFO_RANGE_BEGIN, nl.BRIDGE_VLAN_INFO_RANGE_END
	spec := func(infos ...nl.BridgeVlanInfo) []byte {
		a := nl.NewRtAttr(unix.IFLA_AF_SPEC, nil)
		for _, i := range infos {
			a.AddRtAttr(nl.IFLA_BRIDGE_VLAN_INFO, i.Serialize())
		}
		return a.Serialize()[unix.SizeofRtAttr:]
	}
	for name, b := range map[string][]byte{
		"begin alone":     spec(nl.BridgeVlanInfo{Flags: begin, Vid: 2}),
		"end alone":       spec(nl.BridgeVlanInfo{Flags: end, Vid: 9}),
		"two begins":      spec(nl.BridgeVlanInfo{Flags: begin, Vid: 2}, nl.BridgeVlanInfo{Flags: begin, Vid: 3}),
		"end below begin": spec(nl.BridgeVlanInfo{Flags: begin, Vid: 9}, nl.BridgeVlanInfo{Flags: end, Vid: 2}),
		"other flags":     spec(nl.BridgeVlanInfo{Flags: begin, Vid: 2}, nl.BridgeVlanInfo{Flags: end | nl.BRIDGE_VLAN_INFO_UNTAGGED, Vid: 9}),
		"pvid range":      spec(nl.BridgeVlanInfo{Flags: begin | nl.BRIDGE_VLAN_INFO_PVID, Vid: 2}, nl.BridgeVlanInfo{Flags: end | nl.BRIDGE_VLAN_INFO_PVID, Vid: 9}),
		"vid 0":           spec(nl.BridgeVlanInfo{Vid: 0}),
		"vid 4095":        spec(nl.BridgeVlanInfo{Vid: 4095}),
	} {
		if got, err := vlanInfoRanges(b); !errors.Is(err, unix.EINVAL) {
			t.Errorf("%s: %v %v, want EINVAL", name, got, err)
		}
	}
}

// TestFakeBridgeVLANTrunk: a trunk port of 4094 VLANs (1 as pvid,
// 2-4094 tagged) is one request of one range, reads back equal, and a
// second apply writes nothing; a VLAN in the middle changing its flags,
// going or coming back is one request of that VLAN alone.
func TestFakeBridgeVLANTrunk(t *testing.T) {
	e := newFakeEnv(t)
	s := newBridgeVLANScene()
	trunk := func(vlans ...items.VLANRange) *items.BridgeVLANs {
		return &items.BridgeVLANs{IfName: "v0", Bridge: "br0", VLANs: vset(vlans...)}
	}
	steps := []struct {
		name string
		item *items.BridgeVLANs
		want []string
	}{
		{"the trunk", trunk(vr(1, 1, true, true), vr(2, 4094, false, false)), []string{"vlan-add v0: 2-4094"}},
		{"2000 untagged", trunk(vr(1, 1, true, true), vr(2, 1999, false, false), vr(2000, 2000, false, true), vr(2001, 4094, false, false)),
			[]string{"vlan-add v0: 2000 untagged"}},
		{"2000 goes", trunk(vr(1, 1, true, true), vr(2, 1999, false, false), vr(2001, 4094, false, false)), []string{"vlan-del v0: 2000"}},
		{"2000 back", trunk(vr(1, 1, true, true), vr(2, 4094, false, false)), []string{"vlan-add v0: 2000"}},
	}
	for _, st := range steps {
		e.f.VLANRequests = nil
		e.converge(s.with(st.item)...)
		if !slices.Equal(e.f.VLANRequests, st.want) {
			t.Errorf("%s: requests %q, want %q", st.name, e.f.VLANRequests, st.want)
		}
		if got := e.vlansOf("v0"); !slices.Equal(got, st.item.VLANs) {
			t.Errorf("%s: v0 vlans %s, want %s", st.name, got, st.item.VLANs)
		}
	}
}

// vlanDiff of a trunk is the VIDs that differ, in canonical ranges.
func TestVLANDiff(t *testing.T) {
	have := vset(vr(1, 1, true, true), vr(2, 4094, false, false))
	want := vset(vr(2, 9, false, false), vr(10, 10, true, false), vr(11, 3000, false, false), vr(3001, 3002, false, true))
	add, del := vlanDiff(have, want)
	if wantAdd := vset(vr(10, 10, true, false), vr(3001, 3002, false, true)); !slices.Equal(add, wantAdd) {
		t.Errorf("add %s, want %s", add, wantAdd)
	}
	if wantDel := vset(vr(1, 1, false, false), vr(3003, 4094, false, false)); !slices.Equal(del, wantDel) {
		t.Errorf("del %s, want %s", del, wantDel)
	}
	if add, del := vlanDiff(have, have); add != nil || del != nil {
		t.Errorf("no change: add %s del %s", add, del)
	}
}

// TestFakeBridgeVLANsPortMoves: a port moving to another bridge with its
// VLANs converges in one apply (the kernel drops the VLANs with the old
// bridge; the item follows the port), and the old bridge's own VLANs are
// not touched.
func TestFakeBridgeVLANsPortMoves(t *testing.T) {
	e := newFakeEnv(t)
	s := newBridgeVLANScene()
	br1 := &items.Interface{IfName: "br1", Kind: items.KindBridge, AdminUp: true, Attrs: &items.BridgeAttrs{VLANFiltering: true}}
	vl := func(bridge string) *items.BridgeVLANs {
		return &items.BridgeVLANs{IfName: "v0", Bridge: bridge, VLANs: vset(vr(7, 7, true, true), vr(8, 9, false, false))}
	}
	e.converge(s.with(br1, vl("br0"))...)
	s.p0 = &items.Port{IfName: "v0", Master: "br1", MasterKind: items.KindBridge}
	st := e.apply(s.with(br1, vl("br1"))...)
	if st.Err != nil || len(st.Blocked) > 0 {
		t.Fatalf("moving v0: %v %v\n%s", st.Err, st.Blocked, st.OperationLog)
	}
	e.f.Take()
	if w := e.converge(s.with(br1, vl("br1"))...); len(w) != 0 {
		t.Errorf("the move needed a second apply: %v", w)
	}
	if got := e.vlansOf("v0"); !slices.Equal(got, vl("br1").VLANs) || e.link("v0").Attrs().MasterIndex != e.link("br1").Attrs().Index {
		t.Errorf("v0 after the move: vlans %s master %d", got, e.link("v0").Attrs().MasterIndex)
	}
}

// A bridge's VLAN settings the kernel holds already, on a bridge netagent
// owns, are adoptions (they carry no mark; the create writes nothing);
// settings that differ are not.
func TestFakeBridgeVLANAdoptions(t *testing.T) {
	e := newFakeEnv(t)
	s := newBridgeVLANScene()
	self := &items.BridgeVLANs{IfName: "br0", Bridge: "br0", VLANs: vset(vr(10, 10, true, true))}
	port := &items.BridgeVLANs{IfName: "v0", Bridge: "br0", VLANs: vset(vr(10, 10, true, true), vr(20, 30, false, false))}
	e.converge(s.with(self, port)...)
	found, err := e.f.Adoptions("", dg.New("intended", s.with(self, port)...))
	if err != nil || found[dg.Ref(self)] == nil || found[dg.Ref(port)] == nil {
		t.Fatalf("Adoptions: %v %v, want both VLAN settings", found, err)
	}
	other := &items.BridgeVLANs{IfName: "v0", Bridge: "br0", VLANs: vset(vr(20, 20, true, true))}
	found, err = e.f.Adoptions("", dg.New("intended", s.with(self, other)...))
	if _, ok := found[dg.Ref(other)]; err != nil || ok {
		t.Errorf("Adoptions of settings the kernel does not hold: %v %v", found, err)
	}
}
