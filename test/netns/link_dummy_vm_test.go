//go:build vmtest

package netns_test

import (
	"errors"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/configurators/link"
	"github.com/netagent/netagent/items"
)

// TestInVMDummy drives a dummy through the reconciler on the real kernel
// (the host's has no dummy module): create; a change of MTU, MAC, alias
// and state in place (same ifindex); each with a second run that does
// nothing and a read-back equal to the item; delete. A foreign dummy next
// to it, and one the intent names, is never touched.
func TestInVMDummy(t *testing.T) {
	tgt := linkVMNamespace(t)
	env := newLinkEnv(t, tgt)
	if err := tgt.NL.LinkAdd(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: "fd0", MTU: 1400}}); err != nil {
		t.Fatal(err)
	}
	if err := tgt.NL.LinkSetAlias(linkNL(t, tgt, "fd0"), "someone"); err != nil {
		t.Fatal(err)
	}

	dm := &items.Interface{IfName: "dm0", Kind: items.KindDummy, AdminUp: true, MTU: 9000, Alias: "svc"}
	linkWantOps(t, env.applyTwice(dm), "create interface/dm0")
	l := linkNL(t, tgt, "dm0")
	if _, ok := l.(*netlink.Dummy); !ok || l.Attrs().MTU != 9000 || l.Attrs().Alias != "netagent:svc" || l.Attrs().Flags&netlinkUp == 0 {
		t.Errorf("dm0 = %T mtu %d alias %q flags %v", l, l.Attrs().MTU, l.Attrs().Alias, l.Attrs().Flags)
	}
	index := l.Attrs().Index

	// In place: MTU, MAC, alias and state.
	dm2 := &items.Interface{IfName: "dm0", Kind: items.KindDummy, AdminUp: false, MTU: 1280,
		MAC: linkMAC("02:00:00:00:d0:01"), Alias: "svc2"}
	linkWantOps(t, env.applyTwice(dm2), "modify interface/dm0")
	l = linkNL(t, tgt, "dm0")
	if a := l.Attrs(); a.Index != index || a.MTU != 1280 || a.HardwareAddr.String() != "02:00:00:00:d0:01" ||
		a.Alias != "netagent:svc2" || a.Flags&netlinkUp != 0 {
		t.Errorf("dm0 after modify: index %d (was %d) mtu %d mac %s alias %q flags %v",
			a.Index, index, a.MTU, a.HardwareAddr, a.Alias, a.Flags)
	}

	// A foreign dummy of a name the intent declares is refused, untouched.
	foreign := &items.Interface{IfName: "fd0", Kind: items.KindDummy, AdminUp: true, MTU: 9000}
	st := env.tryApply(dm2, foreign)
	if !errors.Is(st.Err, link.ErrNotOwned) {
		t.Errorf("intent naming the foreign fd0: %v, want ErrNotOwned\n%s", st.Err, st.OperationLog)
	}

	// Delete: dm0 goes, the foreign fd0 stays as it was.
	linkWantOps(t, env.applyTwice(), "delete interface/dm0")
	if !linkGone(t, tgt, "dm0") {
		t.Error("dm0 survives the delete")
	}
	if a := linkNL(t, tgt, "fd0").Attrs(); a.MTU != 1400 || a.Alias != "someone" || a.Flags&netlinkUp != 0 {
		t.Errorf("foreign fd0 touched: mtu %d alias %q flags %v", a.MTU, a.Alias, a.Flags)
	}
	if _, ok := env.readBack(nil).Get(items.LinkRef("fd0")); !ok {
		t.Error("foreign fd0 not read back as an external link")
	}
}
