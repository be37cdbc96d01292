//go:build vmtest

package netns_test

import (
	"context"
	"slices"
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
	"github.com/netagent/netagent/test/vm"
)

// The bonded example renders into items that a kernel with bonding and
// 802.1Q takes as they are, and a VLAN id change recreates the VLAN with
// everything that depends on it (its addresses and the routes through
// them). The VM has neither iptables nor the example files, so this test
// drives the link and l3 configurators directly (no sysctls: their
// configurator lives with the firewall's) on a copy of the example that a
// host test keeps in step (TestAgentCLIBondedCopy).
func TestInVMAgentRenderBonded(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVM$' ./test/netns/")
	}
	tgt := testns.New(t)
	for _, nic := range []string{"eth1", "eth2"} {
		if err := tgt.NL.LinkAdd(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: nic}}); err != nil {
			t.Fatalf("adding dummy %s: %v", nic, err)
		}
	}
	reg := &reconciler.TypeRegistry{}
	if err := link.Register(reg, tgt, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if err := l3.Register(reg, tgt); err != nil {
		t.Fatal(err)
	}
	in, err := intent.Parse([]byte(cliBondedCopy))
	if err != nil {
		t.Fatal(err)
	}
	intended := cliRenderNoSysctls(t, in)
	if log := cliVMApply(t, tgt, reg, intended); len(log) == 0 {
		t.Fatal("nothing applied")
	}
	if log := cliVMApply(t, tgt, reg, intended); len(log) != 0 {
		t.Errorf("second apply ran %s", log)
	}
	bond, ok := linkNL(t, tgt, "bond0").(*netlink.Bond)
	if !ok || bond.Mode != netlink.BOND_MODE_802_3AD || bond.Attrs().MTU != 9000 {
		t.Errorf("bond0: %+v", bond)
	}
	for _, nic := range []string{"eth1", "eth2"} {
		if linkNL(t, tgt, nic).Attrs().MasterIndex != bond.Attrs().Index {
			t.Errorf("%s is not a port of bond0", nic)
		}
	}
	oldIndex := linkNL(t, tgt, "bond0.100").Attrs().Index

	in.Interfaces[3].VLAN.ID = 101 // bond0.100
	log := cliVMApply(t, tgt, reg, cliRenderNoSysctls(t, in))
	var got []string
	for _, e := range log {
		got = append(got, e.String())
	}
	for _, want := range []string{
		"delete route/main 0.0.0.0/0 metric 100 (recreate)",
		"delete route/main ::/0 metric 1024 (recreate)",
		"delete address/bond0.100/10.100.0.2/24 (recreate)",
		"delete interface/bond0.100 (recreate)",
		"create interface/bond0.100 (recreate)",
		"create address/bond0.100/10.100.0.2/24 (recreate)",
		"create route/main 0.0.0.0/0 metric 100 (recreate)",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("the VLAN id change did not run %q:\n%s", want, log)
		}
	}
	for _, e := range log {
		if e.Ref.Name == "bond0" || e.Ref.Name == "bond0.200" || e.Ref.Name == "eth1" {
			t.Errorf("the VLAN id change touched %s", e.Ref)
		}
	}
	v, ok := linkNL(t, tgt, "bond0.100").(*netlink.Vlan)
	if !ok || v.VlanId != 101 || v.Attrs().Index == oldIndex {
		t.Errorf("bond0.100 after the id change: %+v", v)
	}
}

// cliRenderNoSysctls renders an intent and drops its sysctl items.
func cliRenderNoSysctls(t *testing.T, in *intent.Intent) *dg.Graph {
	t.Helper()
	g, err := render.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range g.Refs() {
		if ref.Type == items.TypeSysctl {
			g.Delete(ref)
		}
	}
	return g
}

// cliVMApply reads the namespace back (as the CLI does) and reconciles it
// towards intended, failing on any error or blocked item.
func cliVMApply(t *testing.T, tgt *netnsx.Target, reg reconciler.Registry, intended *dg.Graph) reconciler.OperationLog {
	t.Helper()
	var cur []dg.Item
	linkReadBack := func(tgt *netnsx.Target, hint *dg.Graph) ([]dg.Item, error) { return link.ReadBack(tgt, "", hint) }
	l3ReadBack := func(tgt *netnsx.Target, hint *dg.Graph) ([]dg.Item, error) { return l3.ReadBack(tgt, "", hint) }
	for _, read := range []func(*netnsx.Target, *dg.Graph) ([]dg.Item, error){linkReadBack, l3ReadBack} {
		got, err := read(tgt, intended)
		if err != nil {
			t.Fatal(err)
		}
		cur = append(cur, got...)
	}
	st := reconciler.New(reg).Reconcile(context.Background(), dg.New("current", cur...), intended)
	if st.Err != nil || len(st.Blocked) > 0 {
		t.Fatalf("apply: %v, blocked %v\n%s", st.Err, st.Blocked, st.OperationLog)
	}
	return st.OperationLog
}
