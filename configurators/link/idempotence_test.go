package link

import (
	"context"
	"net"
	"net/netip"
	"os/exec"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
)

// countingNL counts the kernel writes made through the handle.
type countingNL struct {
	nlOps
	writes []string
}

func (c *countingNL) note(op string, l netlink.Link) {
	c.writes = append(c.writes, op+" "+l.Attrs().Name)
}

func (c *countingNL) LinkAdd(l netlink.Link) error { c.note("add", l); return c.nlOps.LinkAdd(l) }
func (c *countingNL) LinkDel(l netlink.Link) error { c.note("del", l); return c.nlOps.LinkDel(l) }
func (c *countingNL) LinkSetUp(l netlink.Link) error {
	c.note("up", l)
	return c.nlOps.LinkSetUp(l)
}
func (c *countingNL) LinkSetDown(l netlink.Link) error {
	c.note("down", l)
	return c.nlOps.LinkSetDown(l)
}
func (c *countingNL) LinkSetMTU(l netlink.Link, mtu int) error {
	c.note("mtu", l)
	return c.nlOps.LinkSetMTU(l, mtu)
}
func (c *countingNL) LinkSetAlias(l netlink.Link, a string) error {
	c.note("alias", l)
	return c.nlOps.LinkSetAlias(l, a)
}
func (c *countingNL) LinkSetHardwareAddr(l netlink.Link, mac net.HardwareAddr) error {
	c.note("mac", l)
	return c.nlOps.LinkSetHardwareAddr(l, mac)
}
func (c *countingNL) LinkSetMaster(l, m netlink.Link) error {
	c.note("master", l)
	return c.nlOps.LinkSetMaster(l, m)
}
func (c *countingNL) LinkSetNoMaster(l netlink.Link) error {
	c.note("nomaster", l)
	return c.nlOps.LinkSetNoMaster(l)
}
func (c *countingNL) LinkSetMacvlanMode(l netlink.Link, m netlink.MacvlanMode) error {
	c.note("macvlan-mode", l)
	return c.nlOps.LinkSetMacvlanMode(l, m)
}

// countingRaw counts the raw writes.
type countingRaw struct {
	rawOps
	writes *[]string
}

func (c countingRaw) setInfoData(index int, kind string, attrs []attr) error {
	*c.writes = append(*c.writes, "info-data "+kind)
	return c.rawOps.setInfoData(index, kind, attrs)
}

func (c countingRaw) markUp(index int, alias string, up bool) error {
	*c.writes = append(*c.writes, "alias+up")
	return c.rawOps.markUp(index, alias, up)
}

func (c countingRaw) setSlaveData(index int, kind string, attrs []attr) error {
	*c.writes = append(*c.writes, "slave-data "+kind)
	return c.rawOps.setSlaveData(index, kind, attrs)
}

// TestDoItTwice creates, modifies and deletes each kind the host kernel
// has twice over, directly through the configurators: the second create
// and every modify to what the kernel already holds make no kernel write,
// and the second delete succeeds.
func TestDoItTwice(t *testing.T) {
	tgt := testns.New(t)
	if out, err := exec.Command("ip", "-n", tgt.Name, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0p").CombinedOutput(); err != nil {
		t.Fatalf("adding eth0: %v\n%s", err, out)
	}
	nl := &countingNL{nlOps: tgt.NL}
	k := &kernel{nl: nl, raw: countingRaw{rawOps: rawNL{ns: tgt.NsHandle()}, writes: &nl.writes}, ns: namedNamespaces{nl: nl}}
	ifc, ports := &InterfaceConfigurator{k: k}, &PortConfigurator{k: k}
	ctx := context.Background()

	all := []dg.Item{
		&items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true, MTU: 1400, Alias: "nic"},
		&items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true, MTU: 1400,
			Attrs: &items.BridgeAttrs{STP: true, ForwardDelay: 5 * time.Second}},
		&items.Interface{IfName: "v0", Kind: items.KindVeth, AdminUp: true, Attrs: &items.VethAttrs{Peer: "v1"}},
		&items.Interface{IfName: "mv0", Kind: items.KindMacvlan, AdminUp: true,
			Attrs: &items.MacvlanAttrs{Parent: "eth0", Mode: "bridge"}},
		&items.Interface{IfName: "vx0", Kind: items.KindVxlan, AdminUp: true,
			Attrs: &items.VxlanAttrs{VNI: 7, Local: netip.MustParseAddr("192.0.2.1"),
				Remote: netip.MustParseAddr("192.0.2.2"), Learning: true}},
		&items.Port{IfName: "v0", Master: "br0", MasterKind: items.KindBridge, Cost: 33},
	}
	cfg := func(item dg.Item) interface {
		Create(context.Context, dg.Item) error
		Modify(context.Context, dg.Item, dg.Item) error
		Delete(context.Context, dg.Item) error
	} {
		if item.Type() == items.TypePort {
			return ports
		}
		return ifc
	}
	for _, item := range all {
		if err := cfg(item).Create(ctx, item); err != nil {
			t.Fatalf("create %s: %v", dg.Ref(item), err)
		}
	}
	nl.writes = nil
	for _, item := range all {
		if err := cfg(item).Create(ctx, item); err != nil {
			t.Errorf("second create %s: %v", dg.Ref(item), err)
		}
		if err := cfg(item).Modify(ctx, item, item); err != nil {
			t.Errorf("modify %s to itself: %v", dg.Ref(item), err)
		}
	}
	if len(nl.writes) != 0 {
		t.Errorf("second create and same-value modify wrote to the kernel: %v", nl.writes)
	}
	// A real change writes exactly what differs.
	mtu := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true, MTU: 1300, Alias: "nic"}
	if err := ifc.Modify(ctx, all[0], mtu); err != nil {
		t.Errorf("modify eth0 mtu: %v", err)
	}
	if len(nl.writes) != 1 || nl.writes[0] != "mtu eth0" {
		t.Errorf("mtu change wrote %v, want [mtu eth0]", nl.writes)
	}
	for i := len(all) - 1; i >= 0; i-- {
		for range 2 {
			if err := cfg(all[i]).Delete(ctx, all[i]); err != nil {
				t.Errorf("delete %s: %v", dg.Ref(all[i]), err)
			}
		}
	}
}
