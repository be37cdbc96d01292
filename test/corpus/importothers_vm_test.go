//go:build vmtest

package corpus_test

import (
	"encoding/json"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// The kinds the host's kernel lacks, configured by hand (over netlink:
// the VM has no ip(8)) — a bond of two dummies, a VLAN on it enslaved to
// a VRF, a dummy with its own MTU, an address and a route in the VRF's
// table — are read by import kernel's readers (link.ReadOthers,
// l3.ReadOthers) as items with no refusal (the tunnel modules' fallback
// devices are the kernel's own: left out); their intent validates, and
// applied to a fresh namespace reads back as the same intent.
func TestInVMImportOthers(t *testing.T) {
	a := testns.New(t)
	vmConfigureByHand(t, a)
	got := vmReadOthers(t, a)
	for _, it := range got {
		if f, ok := it.(*items.Foreign); ok {
			t.Errorf("refused: %s: %s", f.Name(), f.Why)
		}
	}
	imported := render.ToIntent(got)
	in := vmIntent(t, "imported.json", vmEncode(t, imported))
	intended, err := render.Render(in)
	if err != nil {
		t.Fatal(err)
	}

	b := testns.New(t)
	stateDir := t.TempDir()
	reg := &reconciler.TypeRegistry{}
	if err := link.Register(reg, b, stateDir); err != nil {
		t.Fatal(err)
	}
	if err := l3.Register(reg, b); err != nil {
		t.Fatal(err)
	}
	if n := vmApply(t, b, stateDir, reg, intended); n == 0 {
		t.Fatal("the apply ran nothing")
	}
	var back []dg.Item // netagent's objects (the links not its are the kernel's own)
	for it := range vmReadBack(t, b, stateDir, nil).Items() {
		if _, external := it.(*items.Link); !external {
			back = append(back, it)
		}
	}
	if want, got := string(vmEncode(t, imported)), string(vmEncode(t, render.ToIntent(back))); got != want {
		t.Errorf("applied, the import reads back as another intent:\n%s\nimported:\n%s", lineDiff(want, got), want)
	}
	for _, want := range []string{`"type": "bond"`, `"type": "vlan"`, `"type": "vrf"`, `"type": "dummy"`, `"master": "vrf-a"`, `"table": 10`} {
		if !strings.Contains(string(vmEncode(t, imported)), want) {
			t.Errorf("the import lacks %s:\n%s", want, vmEncode(t, imported))
		}
	}
}

// vmConfigureByHand is the hand-made host of TestInVMImportOthers.
func vmConfigureByHand(t *testing.T, tgt *netnsx.Target) {
	t.Helper()
	nl := tgt.NL
	bond := netlink.NewLinkBond(netlink.LinkAttrs{Name: "bond0"})
	bond.Mode, bond.Miimon = netlink.BOND_MODE_ACTIVE_BACKUP, 100
	vrf := &netlink.Vrf{LinkAttrs: netlink.LinkAttrs{Name: "vrf-a"}, Table: 10}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(nl.LinkAdd(bond))
	must(nl.LinkAdd(vrf))
	for _, name := range []string{"d1", "d2"} {
		must(nl.LinkAdd(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: name}}))
		must(nl.LinkSetMaster(vmLink(t, tgt, name), vmLink(t, tgt, "bond0")))
	}
	must(nl.LinkAdd(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: "dm1", MTU: 9000}}))
	must(nl.LinkAdd(&netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: "bond0.10", ParentIndex: vmLink(t, tgt, "bond0").Attrs().Index}, VlanId: 10}))
	must(nl.LinkSetMaster(vmLink(t, tgt, "bond0.10"), vmLink(t, tgt, "vrf-a")))
	for _, name := range []string{"d1", "d2", "bond0", "vrf-a", "bond0.10", "dm1"} {
		must(nl.LinkSetUp(vmLink(t, tgt, name)))
	}
	addr, _ := netlink.ParseAddr("10.60.0.1/24")
	must(nl.AddrAdd(vmLink(t, tgt, "bond0.10"), addr))
	_, dst, _ := net.ParseCIDR("10.61.0.0/16")
	must(nl.RouteAdd(&netlink.Route{Dst: dst, Gw: net.IP(netip.MustParseAddr("10.60.0.2").AsSlice()),
		LinkIndex: vmLink(t, tgt, "bond0.10").Attrs().Index, Table: 10, Protocol: 3}))
}

// vmReadOthers is what import kernel reads of others' links and l3
// objects (the VM has no iptables; sysctls are the host's tests').
func vmReadOthers(t *testing.T, tgt *netnsx.Target) []dg.Item {
	t.Helper()
	links, err := link.ReadOthers(tgt, t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := l3.ReadOthers(tgt, "", false)
	if err != nil {
		t.Fatal(err)
	}
	return append(links, objs...)
}

func vmEncode(t *testing.T, in *intent.Intent) []byte {
	t.Helper()
	data, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}
