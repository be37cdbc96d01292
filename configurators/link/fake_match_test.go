package link

import (
	"errors"
	"net"
	"slices"
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

var (
	permA = net.HardwareAddr{0x52, 0x54, 0, 0, 0, 0x0a}
	permB = net.HardwareAddr{0x52, 0x54, 0, 0, 0, 0x0b}
)

// twoNICs is a fake with two matchable NICs, eth0 (up) and eth1.
func twoNICs(t *testing.T) fakeEnv {
	e := newFakeEnv(t)
	e.f.AddMatchableNIC("eth0", permA, "e1000", "pci-0000:00:03.0")
	e.f.AddMatchableNIC("eth1", permB, "virtio_net", "pci-0000:00:04.0")
	if err := e.f.LinkSetUp(e.link("eth0")); err != nil {
		t.Fatal(err)
	}
	e.f.Take()
	return e
}

// onTop is a VLAN on the interface name: what depends on it.
func onTop(name string) *items.Interface {
	return &items.Interface{IfName: name + ".10", Kind: items.KindVLAN, AdminUp: true, Attrs: &items.VLANAttrs{Parent: name, ID: 10}}
}

func matched(name string, m items.NICMatch) *items.Interface {
	return &items.Interface{IfName: name, Kind: items.KindPhysical, AdminUp: true, Match: &m}
}

// Each key finds its NIC, which is renamed (down, rename, up: its ifindex
// kept) with its original name recorded; a second apply writes nothing and
// the read-back equals the intent; an address on it follows the rename;
// leaving the intent gives the name back.
func TestMatchRenamesByEachKey(t *testing.T) {
	for key, m := range map[string]items.NICMatch{
		"permanentMac": {PermanentMAC: permA}, "mac": {MAC: nil}, "driver": {Driver: "e1000"},
		"path": {Path: "pci-0000:00:03.0"}, "name": {Name: "eth0"},
	} {
		t.Run(key, func(t *testing.T) {
			e := twoNICs(t)
			index := e.link("eth0").Attrs().Index
			if key == "mac" {
				m.MAC = e.link("eth0").Attrs().HardwareAddr
			}
			lan := matched("lan0", m)
			vlan := onTop("lan0")
			writes := e.converge(lan, vlan)
			if want := []string{"down eth0", "name eth0 lan0", "up lan0"}; !slices.Equal(writes[:3], want) {
				t.Errorf("writes %v, want first %v", writes, want)
			}
			if l := e.link("lan0"); l.Attrs().Index != index {
				t.Errorf("lan0 has ifindex %d, want %d (eth0's)", l.Attrs().Index, index)
			}
			found, err := e.f.ReadFound(e.dir)
			if err != nil || found["lan0"] == nil || found["lan0"].Name == nil || *found["lan0"].Name != "eth0" {
				t.Fatalf("recorded originals %v, %v: want lan0 named eth0 before", found, err)
			}
			if p := e.link("lan0.10").Attrs().ParentIndex; p != index {
				t.Errorf("the VLAN on lan0 has parent %d, want %d", p, index)
			}
			e.showsMatch("lan0", lan.Match)
			if st := e.apply(); st.Err != nil {
				t.Fatal(st.Err)
			}
			if e.gone("eth0") || !e.gone("lan0") || e.link("eth0").Attrs().Index != index {
				t.Errorf("leaving the intent did not give eth0 its name back: %v", e.f.Take())
			}
		})
	}
}

// No match and two matches fail the interface with errors naming the match
// and the candidates, block what is on it, and write nothing; so does a
// name that another, unmatched NIC carries.
func TestMatchRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		want  *items.Interface
		err   error
		names []string
	}{
		{"none", matched("lan0", items.NICMatch{Driver: "igb"}), ErrNoMatch, []string{"no NIC matches driver igb"}},
		{"two", matched("lan0", items.NICMatch{Name: "eth*"}), ErrAmbiguousMatch, []string{"name eth*: eth0, eth1"}},
		{"clash", matched("eth1", items.NICMatch{PermanentMAC: permA}), ErrNameTaken, []string{"is eth0", "eth1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := twoNICs(t)
			vlan := onTop(tc.want.IfName)
			st := e.apply(tc.want, vlan)
			if !errors.Is(st.Err, tc.err) {
				t.Fatalf("apply: %v, want %v", st.Err, tc.err)
			}
			for _, s := range tc.names {
				if !strings.Contains(st.Err.Error(), s) {
					t.Errorf("error %q does not name %q", st.Err, s)
				}
			}
			if _, blocked := st.Blocked[dg.Ref(vlan)]; !blocked {
				t.Errorf("the address on it is not blocked: %v", st.Blocked)
			}
			if w := e.f.Take(); len(w) != 0 {
				t.Errorf("writes %v, want none", w)
			}
		})
	}
}

// Someone renames the NIC back: the read-back misses the interface, and
// the next apply renames it again, keeping the first recorded name.
func TestMatchRepairsRenameBack(t *testing.T) {
	e := twoNICs(t)
	lan := matched("lan0", items.NICMatch{PermanentMAC: permA})
	e.converge(lan)
	l := e.link("lan0")
	_ = e.f.LinkSetDown(l)
	_ = e.f.LinkSetName(l, "eth0")
	_ = e.f.LinkSetUp(l)
	e.f.Take()
	if st := e.apply(lan); st.Err != nil || len(st.OperationLog) != 1 {
		t.Fatalf("repair: %v\n%s", st.Err, st.OperationLog)
	}
	if e.gone("lan0") || !e.gone("eth0") {
		t.Error("not renamed lan0 again")
	}
	found, _ := e.f.ReadFound(e.dir)
	if o := found["lan0"]; o == nil || o.Name == nil || *o.Name != "eth0" || len(found) != 1 {
		t.Errorf("originals %v, want lan0 named eth0 before", found)
	}
}

// The plan shows the rename, and the rename back when the interface leaves
// the intent, as a flap of the NIC.
func TestPredictRename(t *testing.T) {
	lan := matched("lan0", items.NICMatch{PermanentMAC: permA})
	if p := Predict(reconciler.OpCreate, false, nil, lan, nil); p.Effect != disrupt.Flap || !slices.Equal(p.LinksDown, []string{"lan0"}) {
		t.Errorf("create: %v, want a flap of lan0", p)
	}
	byName := &items.Interface{IfName: "lan0", Kind: items.KindPhysical, AdminUp: true}
	if p := Predict(reconciler.OpModify, false, byName, lan, nil); p.Effect != disrupt.Flap || p.Certain {
		t.Errorf("modify of a NIC read back without the match: %v, want a possible flap", p)
	}
	if p := Predict(reconciler.OpModify, false, lan, lan, nil); p.Effect != disrupt.None {
		t.Errorf("modify of a NIC read back with the match: %v, want none", p)
	}
	found := Found{"lan0": {Index: 3, Name: new("eth0")}}
	if p := Predict(reconciler.OpDelete, false, nil, lan, found); p.Effect != disrupt.Flap || !strings.Contains(p.Why, "renamed back to eth0") {
		t.Errorf("delete: %v, want a flap renaming it back to eth0", p)
	}
	if p := Predict(reconciler.OpDelete, false, nil, lan, Found{}); p.Effect != disrupt.None {
		t.Errorf("delete of a NIC never renamed: %v, want nothing", p)
	}
}

// showsMatch checks that a read-back without the intent (show's) has the
// interface name with the match m.
func (e fakeEnv) showsMatch(name string, m *items.NICMatch) {
	e.t.Helper()
	got, err := e.kernel().readBack(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, it := range got {
		if i, ok := it.(*items.Interface); ok && i.IfName == name {
			if !i.Match.Equal(m) {
				e.t.Errorf("read back without the intent: %s, want match %s", i, m)
			}
			return
		}
	}
	e.t.Errorf("read back without the intent: no interface %s in %v", name, got)
}

// Another match that finds the same NIC is one modify that renames
// nothing and records the new match (show's); dropping the match (the
// interface now names its NIC lan0) forgets it, and the NIC keeps the
// name until the interface leaves the intent.
func TestMatchChanges(t *testing.T) {
	e := twoNICs(t)
	e.converge(matched("lan0", items.NICMatch{PermanentMAC: permA}))
	byDriver := matched("lan0", items.NICMatch{Driver: "e1000"})
	if writes := e.converge(byDriver); len(writes) != 0 {
		t.Errorf("a new match of the same NIC wrote %v", writes)
	}
	e.showsMatch("lan0", byDriver.Match)
	byName := &items.Interface{IfName: "lan0", Kind: items.KindPhysical, AdminUp: true}
	e.converge(byName)
	e.showsMatch("lan0", nil)
	if st := e.apply(); st.Err != nil || e.gone("eth0") {
		t.Errorf("leaving the intent: %v; eth0 back: %v", st.Err, !e.gone("eth0"))
	}
}

// On a kernel whose link dump has no IFLA_PERM_ADDRESS, a permanentMac
// match finds the NIC by ethtool's permaddr, and renames it; a NIC with
// neither does not match.
func TestMatchPermAddrFallback(t *testing.T) {
	e := twoNICs(t)
	e.f.OlderKernelPermAddr("eth0")
	if a := e.link("eth0").Attrs().PermHWAddr; len(a) != 0 {
		t.Fatalf("eth0's link dump still has a permanent address %s", a)
	}
	index := e.link("eth0").Attrs().Index
	e.converge(matched("lan0", items.NICMatch{PermanentMAC: permA}))
	if l := e.link("lan0"); l.Attrs().Index != index {
		t.Errorf("lan0 has ifindex %d, want %d (eth0's, by its ethtool permaddr)", l.Attrs().Index, index)
	}
	e.f.AddNIC("eth2", 1500) // no permanent address at all
	other := net.HardwareAddr{0, 0, 0, 0, 0, 0}
	if l, err := e.kernel().findNIC(matched("lan2", items.NICMatch{PermanentMAC: other})); !errors.Is(err, ErrNoMatch) {
		t.Errorf("a NIC without a permanent address matched %s: %v, %v", other, l, err)
	}
}

// Knowing the NIC the match finds (MatchedLink, from the external links
// of the state before: keys mac and name), the plan says its rename flaps
// it for certain when it is up, and nothing when it is down.
func TestPredictKnownRename(t *testing.T) {
	mac := net.HardwareAddr{2, 0, 0, 0, 5, 1}
	up := &items.Link{IfName: "ens5", Index: 5, MAC: mac, AdminUp: true}
	down := &items.Link{IfName: "ens6", Index: 6, MAC: net.HardwareAddr{2, 0, 0, 0, 6, 1}}
	before := dg.New("before", up, down, &items.Link{IfName: "lo", Index: 1})
	lan := matched("lan0", items.NICMatch{MAC: mac})
	nic := MatchedLink(lan, before, nil)
	if nic != up {
		t.Fatalf("matched link %v, want ens5", nic)
	}
	if p := PredictNIC(reconciler.OpCreate, false, nil, lan, nil, nic); p.Effect != disrupt.Flap || !p.Certain || !slices.Equal(p.LinksDown, []string{"lan0"}) {
		t.Errorf("create renaming an up NIC: %v, want a certain flap of lan0", p)
	}
	byName := matched("lan1", items.NICMatch{Name: "ens6"})
	if p := PredictNIC(reconciler.OpCreate, false, nil, byName, nil, MatchedLink(byName, before, nil)); p.Effect != disrupt.None {
		t.Errorf("create renaming a down NIC: %v, want none", p)
	}
	if l := MatchedLink(matched("lan2", items.NICMatch{Name: "ens*"}), before, nil); l != nil {
		t.Errorf("two NICs match ens*: %v, want none known", l)
	}
	if l := MatchedLink(matched("lan3", items.NICMatch{PermanentMAC: permA}), before, nil); l != nil {
		t.Errorf("a permanentMac match is not told from the links: %v", l)
	}
	renamed := Found{"ens5": {Index: 5, Name: new("eth7")}}
	if l := MatchedLink(matched("lan4", items.NICMatch{Name: "eth7"}), before, renamed); l != up {
		t.Errorf("a name glob on the name a renamed NIC came up with: %v, want ens5", l)
	}
}
