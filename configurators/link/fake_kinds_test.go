package link

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// These tests run the link configurators over FakeKernel: no root, no
// namespace. The real-kernel tests (testns, test/netns/link_*) stay the
// reference for what the kernel does; these cover the configurators'
// logic, bonds and VLANs included (the host has no bonding nor 8021q).

// fakeEnv is a fake namespace and a state directory, and the apply of a
// restarted agent over them (fresh configurators and read-back).
type fakeEnv struct {
	t   *testing.T
	f   *FakeKernel
	dir string
}

func newFakeEnv(t *testing.T) fakeEnv {
	return fakeEnv{t: t, f: NewFakeKernel(), dir: t.TempDir()}
}

func (e fakeEnv) kernel() *kernel { return e.f.kernel(e.dir) }

// apply reconciles towards want as a restarted agent does.
func (e fakeEnv) apply(want ...dg.Item) reconciler.Status {
	e.t.Helper()
	reg := &reconciler.TypeRegistry{}
	if err := e.f.Register(reg, e.dir); err != nil {
		e.t.Fatal(err)
	}
	intended := dg.New("intended", want...)
	cur, err := e.f.ReadBack(e.dir, intended)
	if err != nil {
		e.t.Fatal(err)
	}
	return reconciler.New(reg).Reconcile(context.Background(), dg.New("current", cur...), intended)
}

// converge applies want, which must succeed; a second apply must run no
// operation and make no write, and read-back must equal want. It returns
// the first apply's writes.
func (e fakeEnv) converge(want ...dg.Item) []string {
	e.t.Helper()
	st := e.apply(want...)
	if st.Err != nil || len(st.Blocked) > 0 {
		e.t.Fatalf("apply: %v %v\n%s", st.Err, st.Blocked, st.OperationLog)
	}
	writes := e.f.Take()
	st = e.apply(want...)
	if w := e.f.Take(); st.Err != nil || len(st.OperationLog) != 0 || len(w) != 0 {
		e.t.Errorf("second apply: %v, writes %v\n%s", st.Err, w, st.OperationLog)
	}
	e.readBackEquals(want...)
	return writes
}

// readBackEquals checks that read-back with want as the hint holds every
// item of want, equal.
func (e fakeEnv) readBackEquals(want ...dg.Item) {
	e.t.Helper()
	got, err := e.kernel().readBack(dg.New("intended", want...))
	if err != nil {
		e.t.Fatal(err)
	}
	byRef := map[dg.ItemRef]dg.Item{}
	for _, it := range got {
		byRef[dg.Ref(it)] = it
	}
	for _, w := range want {
		if g, ok := byRef[dg.Ref(w)]; !ok || !g.Equal(w) {
			e.t.Errorf("read back %v: %v, want %v", dg.Ref(w), g, w)
		}
	}
}

func (e fakeEnv) link(name string) netlink.Link {
	e.t.Helper()
	l, err := e.f.LinkByName(name)
	if err != nil {
		e.t.Fatalf("link %s: %v", name, err)
	}
	return l
}

func (e fakeEnv) gone(name string) bool {
	_, err := e.f.LinkByName(name)
	return isNotFound(err)
}

func opsOf(log reconciler.OperationLog) []string {
	var out []string
	for _, op := range log {
		s := op.Op.String() + " " + op.Ref.Name
		if op.Recreate {
			s += " (recreate)"
		}
		out = append(out, s)
	}
	return out
}

// TestFakeKernelSemantics: the fake answers as the kernel does, so that
// the configurators' error paths are exercised for real.
func TestFakeKernelSemantics(t *testing.T) {
	f := NewFakeKernel()
	eth0 := f.AddNIC("eth0", 1500)
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.LinkAdd(br))
	if err := f.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}); !errors.Is(err, unix.EEXIST) {
		t.Errorf("second br0: %v, want EEXIST", err)
	}
	if err := f.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "v0"}, PeerName: "eth0"}); !errors.Is(err, unix.EEXIST) || !f.gone("v0") {
		t.Errorf("veth over eth0's name: %v, v0 gone %v", err, f.gone("v0"))
	}
	if _, err := f.LinkByName("nope"); !isNotFound(err) || err.Error() != "Link not found" {
		t.Errorf("missing link: %v", err)
	}
	if err := f.LinkSetUp(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "nope"}}); !errors.Is(err, unix.ENODEV) {
		t.Errorf("setting up a missing link: %v, want ENODEV", err)
	}
	if err := f.LinkAdd(&netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: "v10", ParentIndex: 99}, VlanId: 10}); !errors.Is(err, unix.ENODEV) {
		t.Errorf("vlan on a missing parent: %v, want ENODEV", err)
	}
	must(f.LinkAdd(&netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: "eth0.10", ParentIndex: eth0.Attrs().Index}, VlanId: 10}))
	if err := f.LinkAdd(&netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: "again", ParentIndex: eth0.Attrs().Index}, VlanId: 10}); !errors.Is(err, unix.EEXIST) {
		t.Errorf("second vlan 10 on eth0: %v, want EEXIST", err)
	}
	if err := f.LinkSetMTU(f.mustLink(t, "eth0.10"), 1600); !errors.Is(err, unix.ERANGE) {
		t.Errorf("vlan mtu above its parent: %v, want ERANGE", err)
	}
	must(f.LinkSetMTU(eth0, 1400))
	if mtu := f.mustLink(t, "eth0.10").Attrs().MTU; mtu != 1400 {
		t.Errorf("vlan mtu after its parent's shrank: %d", mtu)
	}
	if err := f.LinkSetAlias(eth0, strings.Repeat("a", 256)); !errors.Is(err, unix.ERANGE) {
		t.Errorf("256-byte alias: %v, want ERANGE", err)
	}
	must(f.LinkSetAlias(eth0, strings.Repeat("a", 255)))
	if err := f.LinkDel(eth0); !errors.Is(err, unix.EOPNOTSUPP) {
		t.Errorf("deleting a NIC: %v, want EOPNOTSUPP", err)
	}

	// Carrier: a veth has it when both ends are up.
	must(f.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "v0"}, PeerName: "v1"}))
	must(f.LinkSetUp(f.mustLink(t, "v0")))
	if f.mustLink(t, "v0").Attrs().RawFlags&iffLowerUp != 0 {
		t.Error("v0 has carrier with v1 down")
	}
	must(f.LinkSetUp(f.mustLink(t, "v1")))
	if f.mustLink(t, "v0").Attrs().RawFlags&iffLowerUp == 0 || f.mustLink(t, "v0").Attrs().OperState != netlink.OperUp {
		t.Error("v0 has no carrier with both ends up")
	}

	// Masters: a bond takes a port only down, and opens it; a port has
	// one master.
	must(f.LinkAdd(netlink.NewLinkBond(netlink.LinkAttrs{Name: "bond0"})))
	bond := f.mustLink(t, "bond0")
	if err := f.LinkSetMaster(f.mustLink(t, "v0"), bond); !errors.Is(err, unix.EPERM) {
		t.Errorf("enslaving an up port to a bond: %v, want EPERM", err)
	}
	must(f.LinkSetMaster(f.mustLink(t, "v1"), f.mustLink(t, "br0")))
	must(f.LinkSetDown(f.mustLink(t, "v1")))
	if err := f.LinkSetMaster(f.mustLink(t, "v1"), bond); !errors.Is(err, unix.EBUSY) {
		t.Errorf("enslaving a bridge port to a bond: %v, want EBUSY", err)
	}
	must(f.LinkSetDown(f.mustLink(t, "v0")))
	must(f.LinkSetMaster(f.mustLink(t, "v0"), bond))
	if v0 := f.mustLink(t, "v0"); v0.Attrs().Flags&net.FlagUp == 0 || v0.Attrs().MasterIndex != bond.Attrs().Index {
		t.Errorf("bond port after the enslave: flags %v master %d", v0.Attrs().Flags, v0.Attrs().MasterIndex)
	}
	// Deleting one end deletes the pair; deleting a parent its VLANs.
	must(f.LinkDel(f.mustLink(t, "v1")))
	if !f.gone("v0") || !f.gone("v1") {
		t.Error("veth pair not deleted together")
	}
	must(f.LinkAdd(&netlink.Macvlan{LinkAttrs: netlink.LinkAttrs{Name: "mv0", ParentIndex: f.mustLink(t, "eth0.10").Attrs().Index}}))
	must(f.LinkDel(f.mustLink(t, "eth0.10")))
	if !f.gone("mv0") || !f.gone("eth0.10") {
		t.Error("macvlan over a deleted vlan survives")
	}
	// Bridge options the kernel refuses.
	if err := f.setInfoData(f.mustLink(t, "br0").Attrs().Index, "bridge",
		[]attr{u32Attr(0x5 /* IFLA_BR_STP_STATE */, 1), u32Attr(0x1 /* IFLA_BR_FORWARD_DELAY */, 100)}); !errors.Is(err, unix.ERANGE) {
		t.Errorf("stp with a 1s forward delay: %v, want ERANGE", err)
	}
}

func (f *FakeKernel) mustLink(t *testing.T, name string) netlink.Link {
	t.Helper()
	l, err := f.LinkByName(name)
	if err != nil {
		t.Fatalf("link %s: %v", name, err)
	}
	return l
}

func (f *FakeKernel) gone(name string) bool {
	_, err := f.LinkByName(name)
	return isNotFound(err)
}

// kindCase is one kind's life: create, a change in place, a change that
// needs a recreate (nil: none), and what the kernel must show.
type kindCase struct {
	name     string
	create   *items.Interface
	modify   func(i *items.Interface)
	recreate func(i *items.Interface)
	check    func(e fakeEnv, i *items.Interface)
}

func clone(i *items.Interface) *items.Interface {
	c := *i
	if i.Attrs != nil { // a copy of the attributes, which modify changes
		v := reflect.New(reflect.TypeOf(i.Attrs).Elem())
		v.Elem().Set(reflect.ValueOf(i.Attrs).Elem())
		c.Attrs = v.Interface().(items.KindAttrs)
	}
	return &c
}

func kindCases() []kindCase {
	return append([]kindCase{{
		name:   "vrf",
		create: &items.Interface{IfName: "blue", Kind: items.KindVRF, AdminUp: true, Attrs: &items.VRFAttrs{Table: 10}},
		modify: func(i *items.Interface) {
			i.MTU, i.MAC, i.Alias, i.AdminUp = 9000, net.HardwareAddr{2, 0, 0, 0, 0, 0x44}, "tenant", false
		},
		recreate: func(i *items.Interface) { items.AttrsOf[*items.VRFAttrs](i).Table = 20 },
		check: func(e fakeEnv, i *items.Interface) {
			if v := e.link("blue").(*netlink.Vrf); v.Table != items.AttrsOf[*items.VRFAttrs](i).Table {
				e.t.Errorf("vrf table %d, want %d", v.Table, items.AttrsOf[*items.VRFAttrs](i).Table)
			}
		},
	}, {
		name:   "ipvlan",
		create: &items.Interface{IfName: "iv0", Kind: items.KindIpvlan, AdminUp: true, Attrs: &items.IpvlanAttrs{Parent: "eth0", Mode: "l2"}},
		modify: func(i *items.Interface) {
			a := items.AttrsOf[*items.IpvlanAttrs](i)
			a.Mode, a.Flag, i.MTU, i.Alias = "l3s", "private", 1400, "pod"
		},
		check: func(e fakeEnv, i *items.Interface) {
			a := items.AttrsOf[*items.IpvlanAttrs](i)
			v := e.link("iv0").(*netlink.IPVlan)
			if v.Mode != ipvlanMode(a.Mode) || v.Flag != ipvlanFlag(a.Flag) || v.ParentIndex != e.link("eth0").Attrs().Index {
				e.t.Errorf("ipvlan mode %v flag %v parent %d, want %s %s on eth0", v.Mode, v.Flag, v.ParentIndex, a.Mode, a.Flag)
			}
		},
	}, {
		name:   "dummy",
		create: &items.Interface{IfName: "dm0", Kind: items.KindDummy, AdminUp: true},
		modify: func(i *items.Interface) {
			i.MTU, i.MAC, i.Alias, i.AdminUp = 9000, net.HardwareAddr{2, 0, 0, 0, 0, 0x43}, "svc", false
		},
		check: func(e fakeEnv, i *items.Interface) {
			fl := e.f.byName("dm0")
			if _, ok := fl.link.(*netlink.Dummy); !ok || fl.up() != i.AdminUp || fl.attrs().Alias != markedAlias(i.Alias) {
				e.t.Errorf("dummy: %T up %v alias %q, want up %v alias %q", fl.link, fl.up(), fl.attrs().Alias, i.AdminUp, markedAlias(i.Alias))
			}
		},
	}, {
		name:   "bridge",
		create: &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true, Alias: "lan"},
		modify: func(i *items.Interface) {
			i.MTU, i.Alias = 1400, "lan2"
			i.Attrs = &items.BridgeAttrs{STP: true, VLANFiltering: true, ForwardDelay: 4 * time.Second}
		},
		check: func(e fakeEnv, i *items.Interface) {
			fl := e.f.byName("br0")
			if items.AttrsOf[*items.BridgeAttrs](i) == nil {
				if fl.stp || fl.vlanFiltering || fl.fwdDelay != 1500 {
					e.t.Errorf("new bridge: stp %v filtering %v delay %d", fl.stp, fl.vlanFiltering, fl.fwdDelay)
				}
				return
			}
			if !fl.stp || !fl.vlanFiltering || fl.fwdDelay != 400 || fl.attrs().Alias != "netagent:lan2" {
				e.t.Errorf("bridge: stp %v filtering %v delay %d alias %q", fl.stp, fl.vlanFiltering, fl.fwdDelay, fl.attrs().Alias)
			}
		},
	}, {
		name:   "veth",
		create: &items.Interface{IfName: "v0", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "v1"}},
		modify: func(i *items.Interface) {
			i.MTU, i.MAC = 9000, net.HardwareAddr{2, 0, 0, 0, 0, 0x42}
		},
		recreate: func(i *items.Interface) { i.Attrs = &items.VethAttrs{Peer: "v2"} },
		check: func(e fakeEnv, i *items.Interface) {
			if a := e.link(items.AttrsOf[*items.VethAttrs](i).Peer).Attrs(); a.Alias != "netagent" || a.ParentIndex != e.link("v0").Attrs().Index {
				e.t.Errorf("veth peer %s: alias %q parent %d", items.AttrsOf[*items.VethAttrs](i).Peer, a.Alias, a.ParentIndex)
			}
			if items.AttrsOf[*items.VethAttrs](i).Peer == "v2" && !e.gone("v1") {
				e.t.Error("old peer v1 survives the recreate")
			}
		},
	}, {
		name:     "macvlan",
		create:   &items.Interface{IfName: "mv0", Kind: items.KindMacvlan, AdminUp: true, Attrs: &items.MacvlanAttrs{Parent: "eth0"}},
		modify:   func(i *items.Interface) { items.AttrsOf[*items.MacvlanAttrs](i).Mode, i.MTU = "bridge", 1400 },
		recreate: func(i *items.Interface) { items.AttrsOf[*items.MacvlanAttrs](i).Mode = "passthru" },
		check: func(e fakeEnv, i *items.Interface) {
			if m := e.link("mv0").(*netlink.Macvlan); macvlanModes[m.Mode] != valueOr(items.AttrsOf[*items.MacvlanAttrs](i)).Mode && items.AttrsOf[*items.MacvlanAttrs](i).Mode != "" {
				e.t.Errorf("macvlan mode %v, want %s", m.Mode, items.AttrsOf[*items.MacvlanAttrs](i).Mode)
			}
		},
	}, {
		name: "vxlan",
		create: &items.Interface{IfName: "vx0", Kind: items.KindVxlan, AdminUp: true,
			Attrs: &items.VxlanAttrs{VNI: 42, Local: netip.MustParseAddr("192.0.2.1"), Remote: netip.MustParseAddr("192.0.2.2"), Port: 4789}},
		modify: func(i *items.Interface) {
			items.AttrsOf[*items.VxlanAttrs](i).Remote, items.AttrsOf[*items.VxlanAttrs](i).Learning, i.MTU = netip.MustParseAddr("192.0.2.3"), true, 1400
		},
		recreate: func(i *items.Interface) { items.AttrsOf[*items.VxlanAttrs](i).VNI = 43 },
		check: func(e fakeEnv, i *items.Interface) {
			v := e.link("vx0").(*netlink.Vxlan)
			if v.VxlanId != int(items.AttrsOf[*items.VxlanAttrs](i).VNI) || addrOf(v.Group) != items.AttrsOf[*items.VxlanAttrs](i).Remote || v.Learning != items.AttrsOf[*items.VxlanAttrs](i).Learning {
				e.t.Errorf("vxlan %d remote %v learning %v", v.VxlanId, v.Group, v.Learning)
			}
		},
	}, {
		name:     "vlan",
		create:   &items.Interface{IfName: "eth0.10", Kind: items.KindVLAN, AdminUp: true, Attrs: &items.VLANAttrs{Parent: "eth0", ID: 10}},
		modify:   func(i *items.Interface) { i.MTU, i.Alias = 1496, "uplink" },
		recreate: func(i *items.Interface) { items.AttrsOf[*items.VLANAttrs](i).ID = 20 },
		check: func(e fakeEnv, i *items.Interface) {
			if v := e.link("eth0.10").(*netlink.Vlan); v.VlanId != int(items.AttrsOf[*items.VLANAttrs](i).ID) || v.ParentIndex != e.link("eth0").Attrs().Index {
				e.t.Errorf("vlan id %d parent %d", v.VlanId, v.ParentIndex)
			}
		},
	}, {
		name:   "bond",
		create: &items.Interface{IfName: "bond0", Kind: items.KindBond, AdminUp: true, Attrs: &items.BondAttrs{Mode: "802.3ad"}},
		modify: func(i *items.Interface) {
			// lacp_rate is refused while the bond is up: whileDown.
			i.Attrs = &items.BondAttrs{Mode: "802.3ad", Miimon: 200, LacpRate: "fast", XmitHashPolicy: "layer3+4", MinLinks: 1}
		},
		recreate: func(i *items.Interface) { i.Attrs = &items.BondAttrs{Mode: "active-backup"} },
		check: func(e fakeEnv, i *items.Interface) {
			b := e.link("bond0").(*netlink.Bond)
			if b.Mode.String() != items.AttrsOf[*items.BondAttrs](i).EffectiveMode() || b.Flags&net.FlagUp == 0 {
				e.t.Errorf("bond mode %v flags %v", b.Mode, b.Flags)
			}
			if items.AttrsOf[*items.BondAttrs](i).LacpRate == "fast" && (b.LacpRate != netlink.BOND_LACP_RATE_FAST || b.Miimon != 200 || b.MinLinks != 1) {
				e.t.Errorf("bond options %+v", b)
			}
		},
	}}, tunnelCases()...)
}

// TestFakeKindLifecycle: for every kind netagent manages, create, modify
// in place, recreate where the kernel needs it, and delete, each done
// twice: the second run makes no operation and no write, and read-back
// equals the intent after each step.
func TestFakeKindLifecycle(t *testing.T) {
	for _, c := range kindCases() {
		t.Run(c.name, func(t *testing.T) {
			e := newFakeEnv(t)
			e.f.AddNIC("eth0", 1500)
			nic := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true}
			want := clone(c.create)
			if w := e.converge(want, nic); !slices.Contains(w, "add "+want.IfName) {
				t.Errorf("create writes %v", w)
			}
			if a := e.link(want.IfName).Attrs().Alias; a != markedAlias(want.Alias) {
				t.Errorf("alias after create %q, want the mark %q", a, markedAlias(want.Alias))
			}
			index := e.link(want.IfName).Attrs().Index
			c.check(e, want)

			want = clone(want)
			c.modify(want)
			if w := e.converge(want, nic); slices.Contains(w, "add "+want.IfName) || slices.Contains(w, "del "+want.IfName) {
				t.Errorf("modify in place recreated: %v", w)
			}
			if e.link(want.IfName).Attrs().Index != index {
				t.Error("modify in place changed the ifindex")
			}
			if want.MTU != 0 && e.link(want.IfName).Attrs().MTU != want.MTU {
				t.Errorf("mtu %d, want %d", e.link(want.IfName).Attrs().MTU, want.MTU)
			}
			if want.MAC != nil && e.link(want.IfName).Attrs().HardwareAddr.String() != want.MAC.String() {
				t.Errorf("mac %v, want %v", e.link(want.IfName).Attrs().HardwareAddr, want.MAC)
			}
			c.check(e, want)

			if c.recreate != nil {
				want = clone(want)
				c.recreate(want)
				st := e.apply(want, nic)
				if st.Err != nil || !slices.Contains(opsOf(st.OperationLog), "create "+want.IfName+" (recreate)") {
					t.Errorf("recreate: %v %v", st.Err, opsOf(st.OperationLog))
				}
				e.f.Take()
				e.converge(want, nic)
				if e.link(want.IfName).Attrs().Index == index {
					t.Error("recreate kept the ifindex")
				}
				c.check(e, want)
			}

			st := e.apply()
			if st.Err != nil || !e.gone(want.IfName) {
				t.Fatalf("delete: %v, gone %v\n%s", st.Err, e.gone(want.IfName), st.OperationLog)
			}
			if items.AttrsOf[*items.VethAttrs](want) != nil && !e.gone(items.AttrsOf[*items.VethAttrs](want).Peer) {
				t.Error("veth peer survives the delete")
			}
			e.f.Take()
			if st := e.apply(); st.Err != nil || len(st.OperationLog) != 0 || len(e.f.Take()) != 0 {
				t.Errorf("second delete: %v\n%s", st.Err, st.OperationLog)
			}
			if e.gone("eth0") {
				t.Error("the NIC was deleted")
			}
		})
	}
}

// TestFakeDriftRepaired: a change made behind netagent's back (MTU, admin
// state, alias, bridge STP) is read back as a difference and repaired by
// the next apply, writing only what drifted.
func TestFakeDriftRepaired(t *testing.T) {
	e := newFakeEnv(t)
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true, MTU: 1400, Alias: "lan"}
	e.converge(br)
	l := e.link("br0")
	if err := e.f.LinkSetDown(l); err != nil {
		t.Fatal(err)
	}
	if err := e.f.LinkSetAlias(l, "netagent:other"); err != nil {
		t.Fatal(err)
	}
	e.f.byName("br0").stp = true
	e.f.Take()
	w := e.converge(br)
	slices.Sort(w)
	if want := []string{"alias br0", "data br0", "up br0"}; !slices.Equal(w, want) {
		t.Errorf("repair writes %v, want %v", w, want)
	}
}

// TestFakeForeignUntouched: a link of the wanted name that netagent does
// not own (no mark, no journal entry) is ErrNotOwned for create and
// delete, predicted by Clashes, and never written to; a foreign link is
// read back as an external Link.
func TestFakeForeignUntouched(t *testing.T) {
	e := newFakeEnv(t)
	if err := e.f.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0", Alias: "docker"}}); err != nil {
		t.Fatal(err)
	}
	if err := e.f.LinkSetAlias(e.link("br0"), "docker"); err != nil {
		t.Fatal(err)
	}
	e.f.Take()
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true, MTU: 1400}
	if c, err := e.kernel().clashes(dg.New("intended", br)); err != nil || !errors.Is(c[dg.Ref(br)], ErrNotOwned) {
		t.Errorf("clashes: %v %v", c, err)
	}
	st := e.apply(br)
	if _, state, _ := st.NewCurrentState.Lookup(dg.Ref(br)); !errors.Is(state.LastErr, ErrNotOwned) {
		t.Errorf("create over a foreign br0: %v, want ErrNotOwned", state.LastErr)
	}
	ic := &InterfaceConfigurator{k: e.kernel()}
	if err := ic.Delete(context.Background(), br); !errors.Is(err, ErrNotOwned) {
		t.Errorf("delete of a foreign br0: %v, want ErrNotOwned", err)
	}
	if err := ic.Create(context.Background(), br); !errors.Is(err, ErrNotOwned) {
		t.Errorf("create over a foreign br0: %v, want ErrNotOwned", err)
	}
	if w := e.f.Take(); len(w) != 0 || e.link("br0").Attrs().Alias != "docker" || e.link("br0").Attrs().MTU != 1500 {
		t.Errorf("foreign br0 written: %v, alias %q", w, e.link("br0").Attrs().Alias)
	}
	got, err := e.kernel().readBack(nil)
	if err != nil {
		t.Fatal(err)
	}
	var ext []string
	for _, it := range got {
		if l, ok := it.(*items.Link); ok {
			ext = append(ext, l.IfName+"/"+l.Kind)
		} else {
			t.Errorf("read back %v as netagent's", it)
		}
	}
	if !slices.Equal(ext, []string{"lo/", "br0/bridge"}) {
		t.Errorf("external links %v", ext)
	}
	// A foreign veth end holding the peer's name makes the create fail
	// and leaves nothing behind.
	if err := e.f.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "x0"}, PeerName: "x1"}); err != nil {
		t.Fatal(err)
	}
	v := &items.Interface{IfName: "v0", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "x1"}}
	if err := ic.Create(context.Background(), v); !errors.Is(err, unix.EEXIST) || !e.gone("v0") {
		t.Errorf("veth over a foreign peer name: %v, v0 gone %v", err, e.gone("v0"))
	}
	if j := e.journalOf(); len(j) != 0 {
		t.Errorf("journal after a failed add: %v", j)
	}
}

func (e fakeEnv) journalOf() map[string]journalEntry {
	e.t.Helper()
	st, err := e.kernel().st.snapshot()
	if err != nil {
		e.t.Fatal(err)
	}
	return st.Creating
}

// TestFakePhysical: a NIC is never created, marked or deleted, whatever
// its alias. Its original settings are recorded before netagent first
// changes them, a setting the intent drops is given back, and the delete
// restores the rest; a marked alias in the intent is refused.
func TestFakePhysical(t *testing.T) {
	e := newFakeEnv(t)
	e.f.AddNIC("eth0", 1500)
	ic := &InterfaceConfigurator{k: e.kernel()}
	missing := &items.Interface{IfName: "eth9", Kind: items.KindPhysical, AdminUp: true}
	if err := ic.Create(context.Background(), missing); !errors.Is(err, ErrMissing) {
		t.Errorf("missing NIC: %v, want ErrMissing", err)
	}
	forged := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true, Alias: "netagent:x"}
	if err := ic.Create(context.Background(), forged); !errors.Is(err, ErrReservedAlias) {
		t.Errorf("marked alias on a NIC: %v, want ErrReservedAlias", err)
	}
	mac := net.HardwareAddr{2, 0, 0, 0, 0, 0x99}
	nic := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true, MTU: 9000, Alias: "wan", MAC: mac}
	origMAC := e.link("eth0").Attrs().HardwareAddr.String()
	// The NIC refuses a MAC change while up: whileDown sets it down.
	e.f.byName("eth0").liveMAC = false
	e.f.Take()
	e.converge(nic)
	st, err := e.kernel().st.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	o := st.Originals["eth0"]
	if o == nil || *o.MTU != 1500 || *o.Up || *o.Alias != "" || *o.MAC != origMAC {
		t.Fatalf("originals %+v", o)
	}
	if a := e.link("eth0").Attrs(); a.MTU != 9000 || a.Alias != "wan" || a.HardwareAddr.String() != mac.String() {
		t.Errorf("eth0 after apply: %+v", a)
	}
	// The intent drops the MTU: it is given back at once.
	nic2 := clone(nic)
	nic2.MTU = 0
	e.converge(nic2)
	if mtu := e.link("eth0").Attrs().MTU; mtu != 1500 {
		t.Errorf("mtu after the intent dropped it: %d", mtu)
	}
	// The NIC leaves the intent: everything comes back, the link stays.
	if st := e.apply(); st.Err != nil {
		t.Fatal(st.Err)
	}
	if a := e.link("eth0").Attrs(); a.Alias != "" || a.Flags&net.FlagUp != 0 || a.HardwareAddr.String() != origMAC || a.MTU != 1500 {
		t.Errorf("eth0 after the restore: %+v", a)
	}
	if st, _ := e.kernel().st.snapshot(); len(st.Originals) != 0 {
		t.Errorf("originals after the restore: %+v", st.Originals)
	}

	// A NIC carrying the mark (someone else wrote it) is still never
	// deleted: as a declared physical interface, or when it leaves.
	if err := e.f.LinkSetAlias(e.link("eth0"), "netagent"); err != nil {
		t.Fatal(err)
	}
	e.f.Take()
	up := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true}
	if st := e.apply(up); st.Err != nil {
		t.Fatal(st.Err)
	}
	if st := e.apply(); st.Err != nil || e.gone("eth0") {
		t.Fatalf("marked NIC left the intent: %v, gone %v", st.Err, e.gone("eth0"))
	}
	if err := ic.Delete(context.Background(), up); err != nil || e.gone("eth0") {
		t.Errorf("delete of a physical interface: %v, gone %v", err, e.gone("eth0"))
	}
	for _, w := range e.f.Take() {
		if strings.HasPrefix(w, "del ") || w == "alias eth0" {
			t.Errorf("marked NIC written: %s", w)
		}
	}

	// A veth end playing a NIC (as one handed to a container does) can be
	// deleted by the kernel: once its settings are recorded, a mark
	// someone writes on it later never makes it netagent's.
	if err := e.f.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "eth1"}, PeerName: "eth1p"}); err != nil {
		t.Fatal(err)
	}
	eth1 := &items.Interface{IfName: "eth1", Kind: items.KindPhysical, AdminUp: true, MTU: 1400}
	e.converge(eth1)
	if err := e.f.LinkSetAlias(e.link("eth1"), "netagent"); err != nil {
		t.Fatal(err)
	}
	if st := e.apply(); st.Err != nil || e.gone("eth1") || e.link("eth1").Attrs().MTU != 1500 {
		t.Errorf("marked veth NIC left the intent: %v, gone %v", st.Err, e.gone("eth1"))
	}
}

// TestFakePorts: ports join a bridge (with a cost) and a bond (set down
// for the enslave, given back their admin state), move from one master to
// the other, and leave; a master netagent does not own is ErrNotOwned,
// and a port is never taken from one.
func TestFakePorts(t *testing.T) {
	e := newFakeEnv(t)
	e.f.AddNIC("eth0", 1500)
	e.f.AddNIC("eth1", 1500)
	// A bridge keeps an MTU set after its creation when ports join.
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true, MTU: 1400}
	bond := &items.Interface{IfName: "bond0", Kind: items.KindBond, AdminUp: true, MTU: 9000,
		Attrs: &items.BondAttrs{Mode: "active-backup", Primary: "eth1"}}
	v0 := &items.Interface{IfName: "v0", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "v1"}}
	eth0 := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true}
	eth1 := &items.Interface{IfName: "eth1", Kind: items.KindPhysical, AdminUp: true}
	pv0 := &items.Port{IfName: "v0", Master: "br0", MasterKind: items.KindBridge, Cost: 7}
	pe0 := &items.Port{IfName: "eth0", Master: "bond0", MasterKind: items.KindBond}
	pe1 := &items.Port{IfName: "eth1", Master: "bond0", MasterKind: items.KindBond}
	all := []dg.Item{br, bond, v0, eth0, eth1, pv0, pe0, pe1}
	e.converge(all...)
	for name, master := range map[string]string{"v0": "br0", "eth0": "bond0", "eth1": "bond0"} {
		a := e.link(name).Attrs()
		if a.MasterIndex != e.link(master).Attrs().Index || a.Flags&net.FlagUp == 0 {
			t.Errorf("%s: master %d flags %v, want %s and up", name, a.MasterIndex, a.Flags, master)
		}
	}
	if b := e.link("bond0").(*netlink.Bond); b.Primary != e.link("eth1").Attrs().Index {
		t.Errorf("bond primary %d, want eth1", b.Primary)
	}
	if e.f.byName("v0").cost != 7 || e.link("eth0").Attrs().MTU != 9000 {
		t.Errorf("v0 cost %d, eth0 mtu %d", e.f.byName("v0").cost, e.link("eth0").Attrs().MTU)
	}
	// The bridge's MAC follows its port (it has none of its own).
	if e.link("br0").Attrs().HardwareAddr.String() != e.link("v0").Attrs().HardwareAddr.String() {
		t.Error("bridge MAC does not follow its only port")
	}

	// v0 moves to the bond, eth0 to the bridge (a bridge port may stay up).
	pv0b := &items.Port{IfName: "v0", Master: "bond0", MasterKind: items.KindBond}
	pe0b := &items.Port{IfName: "eth0", Master: "br0", MasterKind: items.KindBridge}
	e.converge(br, bond, v0, eth0, eth1, pv0b, pe0b, pe1)
	if e.link("v0").Attrs().MasterIndex != e.link("bond0").Attrs().Index || e.link("eth0").Attrs().MasterIndex != e.link("br0").Attrs().Index {
		t.Error("ports did not move")
	}
	// They leave: a released bond port gets back its admin state. (The
	// bond's primary leaves with eth1: the kernel reports a primary only
	// while it is a port.)
	noPrimary := clone(bond)
	items.AttrsOf[*items.BondAttrs](noPrimary).Primary = ""
	e.converge(br, noPrimary, v0, eth0, eth1)
	for _, name := range []string{"v0", "eth0", "eth1"} {
		if a := e.link(name).Attrs(); a.MasterIndex != 0 || a.Flags&net.FlagUp == 0 {
			t.Errorf("%s after leaving: master %d flags %v", name, a.MasterIndex, a.Flags)
		}
	}

	// A foreign bridge: netagent neither enslaves into it nor takes its
	// port away.
	if err := e.f.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "docker0"}}); err != nil {
		t.Fatal(err)
	}
	if err := e.f.LinkSetMaster(e.link("eth1"), e.link("docker0")); err != nil {
		t.Fatal(err)
	}
	e.f.Take()
	pc := &PortConfigurator{k: &kernel{nl: e.f, raw: e.f, ns: e.f}}
	toForeign := &items.Port{IfName: "eth0", Master: "docker0", MasterKind: items.KindBridge}
	if err := pc.Create(context.Background(), toForeign); !errors.Is(err, ErrNotOwned) {
		t.Errorf("enslaving into a foreign bridge: %v, want ErrNotOwned", err)
	}
	fromForeign := &items.Port{IfName: "eth1", Master: "br0", MasterKind: items.KindBridge}
	if err := pc.Create(context.Background(), fromForeign); !errors.Is(err, ErrNotOwned) {
		t.Errorf("taking a port from a foreign bridge: %v, want ErrNotOwned", err)
	}
	if err := pc.Delete(context.Background(), &items.Port{IfName: "eth1", Master: "docker0", MasterKind: items.KindBridge}); !errors.Is(err, ErrNotOwned) {
		t.Errorf("releasing from a foreign bridge: %v, want ErrNotOwned", err)
	}
	if w := e.f.Take(); len(w) != 0 || e.link("eth1").Attrs().MasterIndex != e.link("docker0").Attrs().Index {
		t.Errorf("foreign port written: %v", w)
	}
}

// TestFakeBondPrimaryMissing: a bond's primary must exist when the bond
// is configured (ErrMissing, nothing left behind); once it does, the next
// apply creates the bond.
func TestFakeBondPrimaryMissing(t *testing.T) {
	e := newFakeEnv(t)
	bond := &items.Interface{IfName: "bond0", Kind: items.KindBond, AdminUp: true,
		Attrs: &items.BondAttrs{Mode: "active-backup", Primary: "eth0"}}
	ic := &InterfaceConfigurator{k: e.kernel()}
	if err := ic.Create(context.Background(), bond); !errors.Is(err, ErrMissing) || !e.gone("bond0") {
		t.Errorf("bond with a missing primary: %v, bond0 gone %v", err, e.gone("bond0"))
	}
	if j := e.journalOf(); len(j) != 0 {
		t.Errorf("journal after the failed create: %v", j)
	}
	e.f.AddNIC("eth0", 1500)
	if err := ic.Create(context.Background(), bond); err != nil {
		t.Fatal(err)
	}
	if fl := e.f.byName("bond0"); fl.primary != "eth0" {
		t.Errorf("bond primary %q", fl.primary)
	}
}

// TestFakeJournalAdoption: an agent killed between a link's add and its
// mark leaves an unmarked link the create journal names; the next run
// adopts it (marks, converges) when the intent holds it and deletes it
// when it does not. A stale entry never makes a later foreign link
// netagent's.
func TestFakeJournalAdoption(t *testing.T) {
	e := newFakeEnv(t)
	e.f.AddNIC("eth0", 1500)
	br0 := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true, Alias: "lan"}
	v0 := &items.Interface{IfName: "v0", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "v1"}}
	vl := &items.Interface{IfName: "eth0.5", Kind: items.KindVLAN, AdminUp: true, Attrs: &items.VLANAttrs{Parent: "eth0", ID: 5}}
	k := e.kernel()
	e.f.fail = func(op, name string) error {
		if op == "alias" || op == "del" {
			return errKilled
		}
		return nil
	}
	for _, want := range []*items.Interface{br0, v0, vl} {
		if err := k.create(want); !errors.Is(err, errKilled) || e.gone(want.IfName) {
			t.Fatalf("killed create of %s: %v", want.IfName, err)
		}
	}
	e.f.fail = nil
	if j := e.journalOf(); len(j) != 3 {
		t.Fatalf("journal after the kills: %v", j)
	}
	if c, err := e.kernel().clashes(dg.New("intended", br0, v0)); err != nil || len(c) != 0 {
		t.Errorf("clashes with journaled links: %v %v", c, err)
	}
	e.converge(br0, v0)
	for name, alias := range map[string]string{"br0": "netagent:lan", "v0": "netagent", "v1": "netagent"} {
		if a := e.link(name).Attrs().Alias; a != alias {
			t.Errorf("%s adopted with alias %q, want %q", name, a, alias)
		}
	}
	if !e.gone("eth0.5") || e.gone("eth0") {
		t.Error("journaled eth0.5 not intended any more: not deleted (or its parent was)")
	}
	if j := e.journalOf(); len(j) != 0 {
		t.Errorf("journal after adoption: %v", j)
	}

	// Killed before the add: a stale entry. A foreign br5 made later is
	// not netagent's.
	br5 := &items.Interface{IfName: "br5", Kind: items.KindBridge}
	if err := e.kernel().st.journal(br5, nil); err != nil {
		t.Fatal(err)
	}
	e.converge(br0, v0, &items.Interface{IfName: "br6", Kind: items.KindBridge, AdminUp: true})
	if j := e.journalOf(); len(j) != 0 {
		t.Errorf("stale entry kept: %v", j)
	}
	if err := e.f.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br5"}}); err != nil {
		t.Fatal(err)
	}
	if st := e.apply(br0, v0); st.Err != nil || e.gone("br5") {
		t.Errorf("foreign br5 after a stale entry: %v, gone %v", st.Err, e.gone("br5"))
	}
}

// TestFakeReadBack: without a hint every value is the kernel's; with one,
// unset fields read back unset, the undeclared end of a declared veth is
// left out, and a port of netagent's bridge is a Port.
func TestFakeReadBack(t *testing.T) {
	e := newFakeEnv(t)
	e.f.AddNIC("eth0", 1500)
	br := &items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true}
	v0 := &items.Interface{IfName: "v0", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "v1"}}
	vx := &items.Interface{IfName: "vx0", Kind: items.KindVxlan, AdminUp: true,
		Attrs: &items.VxlanAttrs{VNI: 7, Group: netip.MustParseAddr("239.1.1.1"), Parent: "eth0"}}
	p := &items.Port{IfName: "v0", Master: "br0", MasterKind: items.KindBridge}
	nic := &items.Interface{IfName: "eth0", Kind: items.KindPhysical}
	e.converge(br, v0, vx, p, nic)

	got, err := e.kernel().readBack(nil)
	if err != nil {
		t.Fatal(err)
	}
	byRef := map[dg.ItemRef]dg.Item{}
	for _, it := range got {
		byRef[dg.Ref(it)] = it
	}
	b, _ := byRef[items.InterfaceRef("br0")].(*items.Interface)
	if b == nil || items.AttrsOf[*items.BridgeAttrs](b) == nil || items.AttrsOf[*items.BridgeAttrs](b).ForwardDelay != 15*time.Second || b.MTU != 1500 {
		t.Errorf("bridge without a hint: %v", b)
	}
	x, _ := byRef[items.InterfaceRef("vx0")].(*items.Interface)
	if x == nil || items.AttrsOf[*items.VxlanAttrs](x).Port != items.VxlanDefaultPort || items.AttrsOf[*items.VxlanAttrs](x).Group != items.AttrsOf[*items.VxlanAttrs](vx).Group || items.AttrsOf[*items.VxlanAttrs](x).Parent != "eth0" || x.MTU != 1450 {
		t.Errorf("vxlan without a hint: %v", x)
	}
	if _, ok := byRef[items.InterfaceRef("v1")]; !ok {
		t.Error("undeclared veth end v1 missing without a hint")
	}
	port, _ := byRef[dg.Ref(p)].(*items.Port)
	if port == nil || port.Cost != 2 || port.Master != "br0" {
		t.Errorf("port without a hint: %v", port)
	}
	if l, _ := byRef[items.LinkRef("eth0")].(*items.Link); l == nil || l.Carrier || l.AdminUp {
		t.Errorf("eth0 (down) as an external link: %v", l)
	}
	if l, _ := byRef[items.LinkRef("lo")].(*items.Link); l == nil {
		t.Error("lo missing")
	}

	got, err = e.kernel().readBack(dg.New("intended", br, v0, vx, p, nic))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range got {
		if dg.Ref(it) == items.InterfaceRef("v1") {
			t.Error("undeclared end v1 of declared v0 read back")
		}
	}
}

// TestFakeKernelRefusals: a setting the kernel refuses fails the create
// with the kernel's errno, wrapped naming the interface, and leaves no
// link and no journal entry behind; a modify the kernel refuses leaves
// the link as it was.
func TestFakeKernelRefusals(t *testing.T) {
	e := newFakeEnv(t)
	e.f.AddNIC("eth0", 1500)
	ic := &InterfaceConfigurator{k: e.kernel()}
	ctx := context.Background()
	for _, c := range []struct {
		want  *items.Interface
		errno unix.Errno
	}{
		{&items.Interface{IfName: "eth0.10", Kind: items.KindVLAN, MTU: 1600, Attrs: &items.VLANAttrs{Parent: "eth0", ID: 10}}, unix.ERANGE},
		{&items.Interface{IfName: "mv0", Kind: items.KindMacvlan, MTU: 1600, Attrs: &items.MacvlanAttrs{Parent: "eth0"}}, unix.EINVAL},
		{&items.Interface{IfName: "br0", Kind: items.KindBridge, Alias: strings.Repeat("x", 250)}, unix.ERANGE},
		{&items.Interface{IfName: "br1", Kind: items.KindBridge, Attrs: &items.BridgeAttrs{STP: true, ForwardDelay: time.Second}}, unix.ERANGE},
		{&items.Interface{IfName: "bond0", Kind: items.KindBond, Attrs: &items.BondAttrs{LacpRate: "fast"}}, unix.EACCES},
	} {
		err := ic.Create(ctx, c.want)
		if !errors.Is(err, c.errno) || !strings.Contains(err.Error(), c.want.IfName) || !e.gone(c.want.IfName) {
			t.Errorf("create %v: %v (gone %v), want %v naming it and no link", c.want, err, e.gone(c.want.IfName), c.errno)
		}
	}
	if j := e.journalOf(); len(j) != 0 {
		t.Errorf("journal after the refused creates: %v", j)
	}
	if err := ic.Create(ctx, &items.Interface{IfName: "vx0", Kind: items.KindVxlan, Attrs: &items.VxlanAttrs{VNI: 1, Parent: "missing"}}); !errors.Is(err, ErrMissing) {
		t.Errorf("vxlan over a missing parent: %v, want ErrMissing", err)
	}
	mv := &items.Interface{IfName: "mv0", Kind: items.KindMacvlan, Attrs: &items.MacvlanAttrs{Parent: "eth0", Mode: "bridge"}}
	if err := ic.Create(ctx, mv); err != nil {
		t.Fatal(err)
	}
	// The kernel cannot turn a macvlan into passthru in place (EINVAL):
	// NeedsRecreate says so, and a Modify called anyway replaces the link.
	pt := clone(mv)
	items.AttrsOf[*items.MacvlanAttrs](pt).Mode = "passthru"
	if !ic.NeedsRecreate(mv, pt) {
		t.Error("macvlan to passthru without a recreate")
	}
	if err := ic.k.converge(e.link("mv0"), pt); !errors.Is(err, unix.EINVAL) || !strings.Contains(err.Error(), "mv0") {
		t.Errorf("converge to passthru: %v, want EINVAL naming mv0", err)
	}
	index := e.link("mv0").Attrs().Index
	if err := ic.Modify(ctx, mv, pt); err != nil {
		t.Fatal(err)
	}
	if m := e.link("mv0").(*netlink.Macvlan); m.Mode != netlink.MACVLAN_MODE_PASSTHRU || m.Index == index {
		t.Errorf("macvlan after a modify to passthru: mode %v, index %d (was %d)", m.Mode, m.Index, index)
	}
}

// TestFakeVethPeerNamespace: a veth whose peer is created in another named
// namespace: the end here is marked and read back with its peer's name
// and namespace, the peer there is left unmarked (it plays a NIC: an
// external link of that namespace), a second run writes nothing, and the
// delete takes both ends. A missing peer namespace fails the create and
// leaves nothing behind.
func TestFakeVethPeerNamespace(t *testing.T) {
	e := newFakeEnv(t)
	c1 := e.f.NewNamespace("c1")
	v0 := &items.Interface{IfName: "v0", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "eth0", PeerNetns: "c1"}}
	e.converge(v0)
	if a := e.link("v0").Attrs(); a.Alias != "netagent" || a.NetNsID < 0 {
		t.Errorf("v0: alias %q nsid %d", a.Alias, a.NetNsID)
	}
	peer := c1.mustLink(t, "eth0")
	if a := peer.Attrs(); a.Alias != "" || a.ParentIndex != e.link("v0").Attrs().Index {
		t.Errorf("peer in c1: alias %q parent %d", a.Alias, a.ParentIndex)
	}
	// Carrier crosses the namespaces: the peer comes up there.
	if e.link("v0").Attrs().RawFlags&iffLowerUp != 0 {
		t.Error("v0 has carrier with its peer down")
	}
	if err := c1.LinkSetUp(peer); err != nil {
		t.Fatal(err)
	}
	if e.link("v0").Attrs().RawFlags&iffLowerUp == 0 {
		t.Error("v0 has no carrier with its peer up")
	}
	inC1 := fakeEnv{t: t, f: c1, dir: t.TempDir()}
	got, err := inC1.kernel().readBack(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range got {
		if _, ok := it.(*items.Link); !ok {
			t.Errorf("c1 read back %v as netagent's", it)
		}
	}
	if st := e.apply(); st.Err != nil || !e.gone("v0") || !c1.gone("eth0") {
		t.Errorf("delete: %v, v0 gone %v, peer gone %v", st.Err, e.gone("v0"), c1.gone("eth0"))
	}

	v1 := &items.Interface{IfName: "v1", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "eth0", PeerNetns: "nope"}}
	if err := (&InterfaceConfigurator{k: e.kernel()}).Create(context.Background(), v1); err == nil || !strings.Contains(err.Error(), "nope") || !e.gone("v1") {
		t.Errorf("veth into a missing namespace: %v, v1 gone %v", err, e.gone("v1"))
	}
	if len(e.f.world.fds) != 0 {
		t.Errorf("namespace fds left open: %v", e.f.world.fds)
	}
}

// TestFakeDummyForeignUntouched: netagent's dummy and a foreign one side by
// side; the foreign dummy, even of a name the intent once held, is never
// written, deleted or read back as netagent's.
func TestFakeDummyForeignUntouched(t *testing.T) {
	e := newFakeEnv(t)
	if err := e.f.LinkAdd(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: "dm9"}}); err != nil {
		t.Fatal(err)
	}
	if err := e.f.LinkSetAlias(e.link("dm9"), "someone"); err != nil {
		t.Fatal(err)
	}
	e.f.Take()
	dm := &items.Interface{IfName: "dm0", Kind: items.KindDummy, AdminUp: true, MTU: 1400}
	e.converge(dm)
	foreign := &items.Interface{IfName: "dm9", Kind: items.KindDummy, AdminUp: true}
	if st := e.apply(dm, foreign); !errors.Is(stateOf(st, foreign).LastErr, ErrNotOwned) {
		t.Errorf("create over a foreign dm9: %v, want ErrNotOwned", stateOf(st, foreign).LastErr)
	}
	e.apply()
	if !e.gone("dm0") || e.gone("dm9") {
		t.Errorf("after the delete: dm0 gone %v, dm9 gone %v", e.gone("dm0"), e.gone("dm9"))
	}
	if w := e.f.Take(); slices.ContainsFunc(w, func(s string) bool { return strings.Contains(s, "dm9") }) {
		t.Errorf("foreign dm9 written: %v", w)
	}
	got, err := e.kernel().readBack(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range got {
		if l, ok := it.(*items.Link); !ok || (l.IfName == "dm9" && l.Kind != "dummy") {
			t.Errorf("read back %v", it)
		}
	}
}

func stateOf(st reconciler.Status, it dg.Item) dg.StateData {
	_, state, _ := st.NewCurrentState.Lookup(dg.Ref(it))
	return state
}

// TestFakeIpvlanParentAndSharers: ipvlans share their parent's mode and
// flags. Two of netagent's on one parent change together in place; a new
// parent is a recreate; a foreign ipvlan on the parent whose mode netagent
// would change makes the create (and a change) fail with ErrNotOwned and
// is never written; one that already has the wanted mode is no obstacle.
func TestFakeIpvlanParentAndSharers(t *testing.T) {
	e := newFakeEnv(t)
	e.f.AddNIC("eth0", 1500)
	e.f.AddNIC("eth1", 9000)
	nics := []dg.Item{&items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true},
		&items.Interface{IfName: "eth1", Kind: items.KindPhysical, AdminUp: true}}
	iv := func(name, parent, mode string) *items.Interface {
		return &items.Interface{IfName: name, Kind: items.KindIpvlan, AdminUp: true, Attrs: &items.IpvlanAttrs{Parent: parent, Mode: mode}}
	}
	e.converge(append(nics, iv("iv0", "eth0", "l2"), iv("iv1", "eth0", "l2"))...)
	w := e.converge(append(nics, iv("iv0", "eth0", "l3"), iv("iv1", "eth0", "l3"))...)
	if n := len(slices.DeleteFunc(slices.Clone(w), func(s string) bool { return !strings.HasPrefix(s, "data ") })); n != 1 {
		t.Errorf("mode change of two ipvlans of one parent: writes %v, want one", w)
	}
	index := e.link("iv0").Attrs().Index
	st := e.apply(append(nics, iv("iv0", "eth1", "l3"), iv("iv1", "eth0", "l3"))...)
	if st.Err != nil || !slices.Contains(opsOf(st.OperationLog), "create iv0 (recreate)") {
		t.Errorf("new parent: %v %v", st.Err, opsOf(st.OperationLog))
	}
	if l := e.link("iv0"); l.Attrs().Index == index || l.Attrs().ParentIndex != e.link("eth1").Attrs().Index || l.Attrs().MTU != 9000 {
		t.Errorf("iv0 after the new parent: index %d (was %d) parent %d mtu %d", l.Attrs().Index, index, l.Attrs().ParentIndex, l.Attrs().MTU)
	}
	e.converge(append(nics, iv("iv0", "eth1", "l3"), iv("iv1", "eth0", "l3"))...)
	// Read back without a hint (`netagent show`): no MAC, the parent's is
	// not the ipvlan's to set.
	shown, err := e.kernel().readBack(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range shown {
		if i, ok := it.(*items.Interface); ok && i.Kind == items.KindIpvlan && i.MAC != nil {
			t.Errorf("%s read back with mac %v", i.IfName, i.MAC)
		}
	}

	// A foreign ipvlan on eth1, in l3 like netagent's.
	if err := e.f.LinkAdd(&netlink.IPVlan{LinkAttrs: netlink.LinkAttrs{Name: "pod0", ParentIndex: e.link("eth1").Attrs().Index}, Mode: netlink.IPVLAN_MODE_L3}); err != nil {
		t.Fatal(err)
	}
	e.f.Take()
	st = e.apply(append(nics, iv("iv0", "eth1", "l2"), iv("iv1", "eth0", "l3"))...)
	if !errors.Is(stateOf(st, iv("iv0", "", "")).LastErr, ErrNotOwned) {
		t.Errorf("changing the mode under a foreign ipvlan: %v, want ErrNotOwned", stateOf(st, iv("iv0", "", "")).LastErr)
	}
	st = e.apply(append(nics, iv("iv0", "eth1", "l3"), iv("iv1", "eth0", "l3"), iv("iv2", "eth1", "l3s"))...)
	if !errors.Is(stateOf(st, iv("iv2", "", "")).LastErr, ErrNotOwned) || !e.gone("iv2") {
		t.Errorf("creating an l3s ipvlan next to a foreign l3 one: %v, gone %v", stateOf(st, iv("iv2", "", "")).LastErr, e.gone("iv2"))
	}
	if w := e.f.Take(); slices.ContainsFunc(w, func(s string) bool { return strings.Contains(s, "pod0") }) ||
		e.link("pod0").(*netlink.IPVlan).Mode != netlink.IPVLAN_MODE_L3 {
		t.Errorf("foreign pod0 written: %v, mode %v", w, e.link("pod0").(*netlink.IPVlan).Mode)
	}
	e.converge(append(nics, iv("iv0", "eth1", "l3"), iv("iv1", "eth0", "l3"), iv("iv2", "eth1", ""))...)
	e.apply(nics...)
	if !e.gone("iv0") || !e.gone("iv1") || !e.gone("iv2") || e.gone("pod0") {
		t.Errorf("after the delete: iv0 %v iv1 %v iv2 %v gone, pod0 gone %v", e.gone("iv0"), e.gone("iv1"), e.gone("iv2"), e.gone("pod0"))
	}
}

// TestFakeVRFPorts: a NIC and a veth are enslaved to netagent's vrf (a
// Port of MasterKind vrf, read back as such), move to another vrf in
// place, and are released when their Port goes; a foreign vrf is never
// written, and a port of a foreign vrf is not taken.
func TestFakeVRFPorts(t *testing.T) {
	e := newFakeEnv(t)
	e.f.AddNIC("eth0", 1500)
	if err := e.f.LinkAdd(&netlink.Vrf{LinkAttrs: netlink.LinkAttrs{Name: "red"}, Table: 30}); err != nil {
		t.Fatal(err)
	}
	e.f.AddNIC("eth9", 1500)
	if err := e.f.LinkSetMaster(e.link("eth9"), e.link("red")); err != nil {
		t.Fatal(err)
	}
	e.f.Take()
	vrf := func(name string, table uint32) *items.Interface {
		return &items.Interface{IfName: name, Kind: items.KindVRF, AdminUp: true, Attrs: &items.VRFAttrs{Table: table}}
	}
	nic := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true}
	veth := &items.Interface{IfName: "v0", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "v0p"}}
	port := func(name, master string) *items.Port {
		return &items.Port{IfName: name, Master: master, MasterKind: items.KindVRF}
	}
	e.converge(vrf("blue", 10), vrf("green", 20), nic, veth, port("eth0", "blue"), port("v0", "blue"))
	if e.link("eth0").Attrs().MasterIndex != e.link("blue").Attrs().Index || e.link("v0").Attrs().MasterIndex != e.link("blue").Attrs().Index {
		t.Error("ports not enslaved to blue")
	}
	if e.link("eth0").Attrs().Flags&net.FlagUp == 0 {
		t.Error("eth0 down after the enslave")
	}
	w := e.converge(vrf("blue", 10), vrf("green", 20), nic, veth, port("eth0", "green"), port("v0", "blue"))
	if !slices.Contains(w, "master eth0") || e.link("eth0").Attrs().MasterIndex != e.link("green").Attrs().Index {
		t.Errorf("moving eth0 to green: writes %v", w)
	}
	// A port of the foreign vrf red is not taken.
	st := e.apply(vrf("blue", 10), vrf("green", 20), nic, veth, port("eth0", "green"), port("v0", "blue"),
		&items.Interface{IfName: "eth9", Kind: items.KindPhysical, AdminUp: true}, port("eth9", "blue"))
	if !errors.Is(stateOf(st, port("eth9", "")).LastErr, ErrNotOwned) {
		t.Errorf("taking eth9 from the foreign red: %v, want ErrNotOwned", stateOf(st, port("eth9", "")).LastErr)
	}
	e.f.Take()
	e.converge(vrf("blue", 10), nic, veth)
	if e.link("eth0").Attrs().MasterIndex != 0 || e.link("v0").Attrs().MasterIndex != 0 || !e.gone("green") {
		t.Error("ports not released, or green not deleted")
	}
	e.apply()
	if w := e.f.Take(); slices.ContainsFunc(w, func(s string) bool { return strings.Contains(s, "red") || strings.Contains(s, "eth9") }) ||
		e.gone("red") || e.link("eth9").Attrs().MasterIndex != e.link("red").Attrs().Index {
		t.Errorf("foreign red or its port written: %v", w)
	}
}

// TestFakePhysicalForgedOriginals: the originals a NIC gets back come from
// the state directory, which is not trusted: one the intent could not
// have (netagent's mark as the alias of a NIC found without it, an MTU
// out of range, a multicast MAC) is refused with an error naming the
// record and the NIC, and the NIC keeps its settings; the mark is never
// restored, so the NIC is never taken for netagent's and deleted.
func TestFakePhysicalForgedOriginals(t *testing.T) {
	for _, forge := range []struct {
		name string
		set  func(o *original)
	}{
		{"mark as alias", func(o *original) { o.Alias = new("netagent") }},
		{"mtu out of range", func(o *original) { o.MTU = new(70000) }},
		{"multicast mac", func(o *original) { o.MAC = new("01:00:5e:00:00:01") }},
	} {
		t.Run(forge.name, func(t *testing.T) {
			e := newFakeEnv(t)
			e.f.AddNIC("eth0", 1500)
			e.converge(&items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true, MTU: 9000, Alias: "wan"})
			if err := e.kernel().st.update(func(st *nsState) bool { forge.set(st.Originals["eth0"]); return true }); err != nil {
				t.Fatal(err)
			}
			st := e.apply()
			if st.Err == nil || !strings.Contains(st.Err.Error(), stateFileName) || !strings.Contains(st.Err.Error(), "eth0") {
				t.Errorf("restore with a forged original: %v, want an error naming %s and eth0", st.Err, stateFileName)
			}
			if a := e.link("eth0").Attrs(); a.Alias != "wan" || a.MTU != 9000 {
				t.Errorf("eth0 after the refused restore: alias %q mtu %d, want as it was", a.Alias, a.MTU)
			}
			e.apply()
			if e.gone("eth0") {
				t.Error("the NIC was deleted")
			}
		})
	}
}
