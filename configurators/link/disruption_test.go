package link

import (
	"net"
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// TestPredictInterface: what each converge step, and a recreate, does to
// traffic, per kind.
func TestPredictInterface(t *testing.T) {
	mac := net.HardwareAddr{2, 0, 0, 0, 0, 9}
	ifc := func(name string, kind items.InterfaceKind, mod func(*items.Interface)) *items.Interface {
		i := &items.Interface{IfName: name, Kind: kind, AdminUp: true, MTU: 1500}
		if mod != nil {
			mod(i)
		}
		return i
	}
	cases := []struct {
		name      string
		op        reconciler.Operation
		recreate  bool
		old, want *items.Interface
		effect    disrupt.Effect
		certain   bool
		down      []string
	}{
		{"new link", reconciler.OpCreate, false, nil, ifc("br0", items.KindBridge, nil), disrupt.None, true, nil},
		{"mtu on a bridge", reconciler.OpModify, false, ifc("br0", items.KindBridge, nil),
			ifc("br0", items.KindBridge, func(i *items.Interface) { i.MTU = 1400 }), disrupt.None, true, nil},
		{"mtu on a veth", reconciler.OpModify, false, ifc("v0", items.KindVeth, nil),
			ifc("v0", items.KindVeth, func(i *items.Interface) { i.MTU = 9000 }), disrupt.None, true, nil},
		{"mtu on a NIC", reconciler.OpModify, false, ifc("eth0", items.KindPhysical, nil),
			ifc("eth0", items.KindPhysical, func(i *items.Interface) { i.MTU = 9000 }), disrupt.Flap, false, []string{"eth0"}},
		{"mac on a veth", reconciler.OpModify, false, ifc("v0", items.KindVeth, nil),
			ifc("v0", items.KindVeth, func(i *items.Interface) { i.MAC = mac }), disrupt.None, true, nil},
		{"mac on a NIC", reconciler.OpModify, false, ifc("eth0", items.KindPhysical, nil),
			ifc("eth0", items.KindPhysical, func(i *items.Interface) { i.MAC = mac }), disrupt.Flap, false, []string{"eth0"}},
		{"set down", reconciler.OpModify, false, ifc("br0", items.KindBridge, nil),
			ifc("br0", items.KindBridge, func(i *items.Interface) { i.AdminUp = false }), disrupt.Down, true, []string{"br0"}},
		{"set up", reconciler.OpModify, false, ifc("br0", items.KindBridge, func(i *items.Interface) { i.AdminUp = false }),
			ifc("br0", items.KindBridge, nil), disrupt.None, true, nil},
		{"bond lacp rate", reconciler.OpModify, false,
			ifc("bond0", items.KindBond, func(i *items.Interface) { i.Attrs = &items.BondAttrs{Mode: "802.3ad", LacpRate: "slow"} }),
			ifc("bond0", items.KindBond, func(i *items.Interface) { i.Attrs = &items.BondAttrs{Mode: "802.3ad", LacpRate: "fast"} }),
			disrupt.Flap, false, []string{"bond0"}},
		{"bond miimon", reconciler.OpModify, false,
			ifc("bond0", items.KindBond, func(i *items.Interface) { i.Attrs = &items.BondAttrs{Mode: "802.3ad", Miimon: 100} }),
			ifc("bond0", items.KindBond, func(i *items.Interface) { i.Attrs = &items.BondAttrs{Mode: "802.3ad", Miimon: 200} }),
			disrupt.None, true, nil},
		{"veth set down", reconciler.OpModify, false, ifc("v0", items.KindVeth, func(i *items.Interface) { i.Attrs = &items.VethAttrs{Peer: "v0-peer"} }),
			ifc("v0", items.KindVeth, func(i *items.Interface) { i.AdminUp = false; i.Attrs = &items.VethAttrs{Peer: "v0-peer"} }),
			disrupt.Down, true, []string{"v0", "v0-peer"}},
		{"veth deleted with its peer", reconciler.OpDelete, false, nil,
			ifc("v0", items.KindVeth, func(i *items.Interface) { i.Attrs = &items.VethAttrs{Peer: "v0-peer"} }), disrupt.Removed, true, []string{"v0", "v0-peer"}},
		{"veth with its peer elsewhere deleted", reconciler.OpDelete, false, nil,
			ifc("v0", items.KindVeth, func(i *items.Interface) { i.Attrs = &items.VethAttrs{Peer: "eth0", PeerNetns: "ct1"} }), disrupt.Removed, true, []string{"v0"}},
		{"vxlan recreate", reconciler.OpDelete, true, nil, ifc("vx0", items.KindVxlan, nil), disrupt.Recreate, true, []string{"vx0"}},
		{"deleted", reconciler.OpDelete, false, nil, ifc("br0", items.KindBridge, nil), disrupt.Removed, true, []string{"br0"}},
		{"NIC given back", reconciler.OpDelete, false, nil, ifc("eth0", items.KindPhysical, nil), disrupt.None, true, nil},
	}
	for _, c := range cases {
		p := Predict(c.op, c.recreate, c.old, c.want, Found{})
		if p.Effect != c.effect || p.Certain != c.certain || !slices.Equal(p.LinksDown, c.down) {
			t.Errorf("%s: got %s (certain %v, down %v), want %s (certain %v, down %v)", c.name, p, p.Certain, p.LinksDown, c.effect, c.certain, c.down)
		}
	}
}

// TestPredictNICRestore: a NIC leaving the intent gets back what it had
// before netagent, with converge's steps: one found down goes down again,
// one found with another MTU may flap; without the record, one that is up
// may go down.
func TestPredictNICRestore(t *testing.T) {
	up, down, mtu := true, false, 1400
	nic := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true, MTU: 1500}
	cases := []struct {
		name    string
		found   Found
		effect  disrupt.Effect
		certain bool
		down    []string
	}{
		{"found down", Found{"eth0": {Up: &down}}, disrupt.Down, true, []string{"eth0"}},
		{"found up", Found{"eth0": {Up: &up}}, disrupt.None, true, nil},
		{"found with another mtu", Found{"eth0": {MTU: &mtu}}, disrupt.Flap, false, []string{"eth0"}},
		{"another NIC's record", Found{"eth1": {Up: &down}}, disrupt.None, true, nil},
		{"no record read", nil, disrupt.Down, false, []string{"eth0"}},
	}
	// A NIC that stays, its MTU left out: convergePhysical gives the found
	// one back at once.
	unset := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true}
	if p := Predict(reconciler.OpModify, false, nic, unset, Found{"eth0": {MTU: &mtu}}); p.Effect != disrupt.Flap || p.Certain {
		t.Errorf("mtu left out: got %s, want a possible flap (1500 -> 1400)", p)
	}
	for _, c := range cases {
		p := Predict(reconciler.OpDelete, false, nil, nic, c.found)
		if p.Effect != c.effect || p.Certain != c.certain || !slices.Equal(p.LinksDown, c.down) {
			t.Errorf("%s: got %s (certain %v, down %v), want %s (certain %v, down %v)", c.name, p, p.Certain, p.LinksDown, c.effect, c.certain, c.down)
		}
	}
}

// TestPredictPort: a bridge port moves without going down, but its old
// bridge loses its carrier when it was the last port; bond and vrf ports
// flap.
func TestPredictPort(t *testing.T) {
	port := func(name, master string, kind items.InterfaceKind) *items.Port {
		return &items.Port{IfName: name, Master: master, MasterKind: kind}
	}
	before := dg.New("current")
	before.Put(&items.Interface{IfName: "br1", Kind: items.KindBridge, AdminUp: true})
	before.Put(&items.Interface{IfName: "br2", Kind: items.KindBridge, AdminUp: true})
	before.Put(port("p1", "br1", items.KindBridge))
	before.Put(port("p3", "br1", items.KindBridge))
	before.Put(port("p2", "br2", items.KindBridge))
	cases := []struct {
		name      string
		op        reconciler.Operation
		old, want *items.Port
		effect    disrupt.Effect
		down      []string
	}{
		{"joins a bridge", reconciler.OpCreate, nil, port("p4", "br1", items.KindBridge), disrupt.None, nil},
		{"moves off a bridge with other ports", reconciler.OpModify, port("p1", "br1", items.KindBridge), port("p1", "br2", items.KindBridge), disrupt.Detach, nil},
		{"moves off its bridge's last port", reconciler.OpModify, port("p2", "br2", items.KindBridge), port("p2", "br1", items.KindBridge), disrupt.Down, []string{"br2"}},
		{"leaves its bridge's last port", reconciler.OpDelete, nil, port("p2", "br2", items.KindBridge), disrupt.Removed, []string{"br2"}},
		{"cost changed", reconciler.OpModify, port("p1", "br1", items.KindBridge), &items.Port{IfName: "p1", Master: "br1", MasterKind: items.KindBridge, Cost: 5}, disrupt.None, nil},
		{"joins a bond", reconciler.OpCreate, nil, port("eth0", "bond0", items.KindBond), disrupt.Flap, []string{"eth0"}},
		{"joins a vrf", reconciler.OpCreate, nil, port("eth1", "vrf0", items.KindVRF), disrupt.Flap, []string{"eth1"}},
	}
	for _, c := range cases {
		p := PredictPort(c.op, false, c.old, c.want, before)
		if p.Effect != c.effect || !slices.Equal(p.LinksDown, c.down) {
			t.Errorf("%s: got %s (down %v), want %s (down %v)", c.name, p, p.LinksDown, c.effect, c.down)
		}
	}
}
