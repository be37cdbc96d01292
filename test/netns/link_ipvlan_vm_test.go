//go:build vmtest

package netns_test

import (
	"errors"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// TestInVMIpvlan drives ipvlans through the reconciler on the real kernel
// (the host's has no ipvlan module), on dummies playing NICs: create two
// on one parent in l2; change mode and flag in place (same ifindex, both
// follow: the kernel keeps them per parent) and MTU and alias; a new
// parent is a recreate; delete. Each step is applied twice, the second
// time with zero operations, and read back equal. A foreign ipvlan on a
// parent blocks a mode netagent would force on it and is never touched.
func TestInVMIpvlan(t *testing.T) {
	tgt := linkVMNamespace(t)
	env := newLinkEnv(t, tgt)
	linkDummies(t, tgt, "eth0", "eth1")
	nics := linkNICs("eth0", "eth1")
	iv := func(name, parent, mode, flag string, mtu int) *items.Interface {
		return &items.Interface{IfName: name, Kind: items.KindIpvlan, AdminUp: true, MTU: mtu,
			Attrs: &items.IpvlanAttrs{Parent: parent, Mode: mode, Flag: flag}}
	}
	with := func(ifcs ...*items.Interface) []dg.Item {
		var out []dg.Item
		for _, i := range append(append([]*items.Interface{}, nics...), ifcs...) {
			out = append(out, i)
		}
		return out
	}

	linkWantOps(t, env.applyTwice((with(iv("iv0", "eth0", "l2", "", 0), iv("iv1", "eth0", "l2", "", 0)))...),
		"modify interface/eth0", "modify interface/eth1", "create interface/iv0", "create interface/iv1")
	v := linkNL(t, tgt, "iv0").(*netlink.IPVlan)
	if v.Mode != netlink.IPVLAN_MODE_L2 || v.ParentIndex != linkNL(t, tgt, "eth0").Attrs().Index || v.Attrs().Alias != "netagent" {
		t.Errorf("iv0 = mode %v parent %d alias %q", v.Mode, v.ParentIndex, v.Attrs().Alias)
	}
	index := v.Attrs().Index

	// In place: mode, flag (both ipvlans of eth0), MTU, alias.
	linkWantOps(t, env.applyTwice((with(iv("iv0", "eth0", "l3s", "private", 1400), iv("iv1", "eth0", "l3s", "private", 0)))...),
		"modify interface/iv0", "modify interface/iv1")
	for _, n := range []string{"iv0", "iv1"} {
		if v := linkNL(t, tgt, n).(*netlink.IPVlan); v.Mode != netlink.IPVLAN_MODE_L3S || v.Flag != netlink.IPVLAN_FLAG_PRIVATE {
			t.Errorf("%s after modify: mode %v flag %v", n, v.Mode, v.Flag)
		}
	}
	if a := linkNL(t, tgt, "iv0").Attrs(); a.Index != index || a.MTU != 1400 {
		t.Errorf("iv0 after modify: index %d (was %d) mtu %d", a.Index, index, a.MTU)
	}
	// Back to the defaults, l3 and bridge, spelt "".
	linkWantOps(t, env.applyTwice((with(iv("iv0", "eth0", "", "", 1400), iv("iv1", "eth0", "", "", 0)))...),
		"modify interface/iv0", "modify interface/iv1")
	if v := linkNL(t, tgt, "iv1").(*netlink.IPVlan); v.Mode != netlink.IPVLAN_MODE_L3 || v.Flag != netlink.IPVLAN_FLAG_BRIDGE {
		t.Errorf("iv1 at the defaults: mode %v flag %v", v.Mode, v.Flag)
	}

	// `netagent show --json` applied back does nothing.
	(&vrfEnv{t: t, tgt: tgt, reg: env.reg, stateDir: env.stateDir}).showRoundTrip()

	// Recreate: another parent.
	linkWantOps(t, env.applyTwice((with(iv("iv0", "eth1", "", "", 1400), iv("iv1", "eth0", "", "", 0)))...),
		"delete interface/iv0", "create interface/iv0")
	if a := linkNL(t, tgt, "iv0").Attrs(); a.Index == index || a.ParentIndex != linkNL(t, tgt, "eth1").Attrs().Index {
		t.Errorf("iv0 after the new parent: index %d (was %d) parent %d", a.Index, index, a.ParentIndex)
	}

	// A foreign ipvlan on eth1 in l3: netagent may not move eth1 to l2.
	if err := tgt.NL.LinkAdd(&netlink.IPVlan{LinkAttrs: netlink.LinkAttrs{Name: "pod0", ParentIndex: linkNL(t, tgt, "eth1").Attrs().Index},
		Mode: netlink.IPVLAN_MODE_L3}); err != nil {
		t.Fatal(err)
	}
	st := env.tryApply((with(iv("iv0", "eth1", "l2", "", 1400), iv("iv1", "eth0", "", "", 0)))...)
	if !errors.Is(st.Err, link.ErrNotOwned) {
		t.Errorf("mode l2 under a foreign ipvlan: %v, want ErrNotOwned\n%s", st.Err, st.OperationLog)
	}
	if v := linkNL(t, tgt, "pod0").(*netlink.IPVlan); v.Mode != netlink.IPVLAN_MODE_L3 || v.Attrs().Alias != "" {
		t.Errorf("foreign pod0 touched: mode %v alias %q", v.Mode, v.Attrs().Alias)
	}

	linkWantOps(t, env.applyTwice(with()...), "delete interface/iv0", "delete interface/iv1")
	if !linkGone(t, tgt, "iv0") || !linkGone(t, tgt, "iv1") || linkGone(t, tgt, "pod0") {
		t.Error("after the delete: netagent's ipvlans survive or the foreign one is gone")
	}
	if _, ok := env.readBack(nil).Get(items.LinkRef("pod0")); !ok {
		t.Error("foreign pod0 not read back as an external link")
	}
}
