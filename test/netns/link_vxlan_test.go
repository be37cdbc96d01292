package netns_test

import (
	"net/netip"
	"testing"

	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
)

// TestLinkVxlan creates a unicast VXLAN, changes its local and remote
// addresses and learning in place, changes its VNI (a recreate), and deletes
// it.
func TestLinkVxlan(t *testing.T) {
	tgt := testns.New(t)
	env := newLinkEnv(t, tgt)
	vx := func(vni uint32, local, remote string, learning bool) *items.Interface {
		return &items.Interface{IfName: "vx0", Kind: items.KindVxlan, AdminUp: true, MTU: 1400,
			Attrs: &items.VxlanAttrs{VNI: vni, Local: netip.MustParseAddr(local),
				Remote: netip.MustParseAddr(remote), Port: 4789, Learning: learning}}
	}
	linkWantOps(t, env.applyTwice(vx(100, "192.0.2.1", "192.0.2.2", true)), "create interface/vx0")
	got := linkMustShow(t, tgt, "vx0")
	d := got.LinkInfo.InfoData
	if got.LinkInfo.InfoKind != "vxlan" || got.MTU != 1400 || !got.up() || d["id"] != 100.0 ||
		d["local"] != "192.0.2.1" || d["remote"] != "192.0.2.2" || d["port"] != 4789.0 || d["learning"] != true {
		t.Errorf("ip link vx0 = %+v", got)
	}

	linkWantOps(t, env.applyTwice(vx(100, "192.0.2.9", "192.0.2.3", false)), "modify interface/vx0")
	d = linkMustShow(t, tgt, "vx0").LinkInfo.InfoData
	if d["local"] != "192.0.2.9" || d["remote"] != "192.0.2.3" || d["learning"] != false {
		t.Errorf("after modify: vx0 data = %v", d)
	}

	linkWantOps(t, env.applyTwice(vx(200, "192.0.2.9", "192.0.2.3", false)),
		"delete interface/vx0", "create interface/vx0")
	if id := linkMustShow(t, tgt, "vx0").LinkInfo.InfoData["id"]; id != 200.0 {
		t.Errorf("after recreate: vni %v, want 200", id)
	}

	linkWantOps(t, env.applyTwice(), "delete interface/vx0")
	linkMustBeGone(t, tgt, "vx0")
}

// TestLinkVxlanMulticast creates a multicast VXLAN over a NIC with the
// kernel's default port, which reads back as 0.
func TestLinkVxlanMulticast(t *testing.T) {
	tgt := testns.New(t)
	env := newLinkEnv(t, tgt)
	linkExec(t, tgt, "ip", "link", "add", "eth0", "type", "veth", "peer", "name", "eth0p")
	eth0 := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true}
	vx := &items.Interface{IfName: "vx1", Kind: items.KindVxlan,
		Attrs: &items.VxlanAttrs{VNI: 42, Group: netip.MustParseAddr("239.1.1.1"), Parent: "eth0", Learning: true}}
	linkWantOps(t, env.applyTwice(eth0, vx), "modify interface/eth0", "create interface/vx1")
	d := linkMustShow(t, tgt, "vx1").LinkInfo.InfoData
	if d["group"] != "239.1.1.1" || d["link"] != "eth0" || d["port"] != 8472.0 {
		t.Errorf("ip link vx1 data = %v", d)
	}
	// Another group is a recreate.
	vx2 := &items.Interface{IfName: "vx1", Kind: items.KindVxlan,
		Attrs: &items.VxlanAttrs{VNI: 42, Group: netip.MustParseAddr("239.1.1.2"), Parent: "eth0", Learning: true}}
	linkWantOps(t, env.applyTwice(eth0, vx2), "delete interface/vx1", "create interface/vx1")
}
