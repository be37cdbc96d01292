//go:build vmtest

package netns_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/reconciler"
	"github.com/netagent/netagent/test/vm"
)

// disruptionBonded is a bond with one NIC, a VLAN on it with an address,
// and a route through a gateway on the VLAN.
const disruptionBonded = `{"version": 1,
  "interfaces": [
    {"name": "eth1", "type": "physical", "master": "bond0"},
    {"name": "bond0", "type": "bond", "bond": {"mode": "active-backup", "miimon": 100}},
    {"name": "bond0.100", "type": "vlan", "vlan": {"parent": "bond0", "id": 100}, "addresses": ["10.100.0.2/24"]}
  ],
  "routes": [{"to": "10.200.0.0/16", "via": "10.100.0.1"}]
}`

// TestInVMPlanDisruptionBondVLAN checks the predictions of the bond and
// VLAN kinds against the kernel, as TestPlanDisruptionMatchesKernel does
// for the host's kinds: a NIC joining a bond flaps (set down to be
// enslaved), a VLAN's ID change recreates it (new ifindex) and withdraws
// its subnet route and the route through it for the duration.
func TestInVMPlanDisruptionBondVLAN(t *testing.T) {
	if !vm.InGuest() {
		t.Fatal("this test runs in the VM only: go test -run '^TestVM$' ./test/netns/")
	}
	tgt := testns.New(t)
	for _, nic := range []string{"eth1", "eth2"} {
		if err := tgt.NL.LinkAdd(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: nic}}); err != nil {
			t.Fatalf("adding dummy %s: %v", nic, err)
		}
		if err := tgt.NL.LinkSetUp(linkNL(t, tgt, nic)); err != nil {
			t.Fatal(err)
		}
	}
	reg := &reconciler.TypeRegistry{}
	if err := link.Register(reg, tgt, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if err := l3.Register(reg, tgt); err != nil {
		t.Fatal(err)
	}
	in, err := intent.Parse([]byte(disruptionBonded))
	if err != nil {
		t.Fatal(err)
	}
	cliVMApply(t, tgt, reg, cliRenderNoSysctls(t, in))

	in.Interfaces = append(in.Interfaces, intent.Interface{Name: "eth2", Type: "physical", Master: "bond0"})
	in.Interfaces[2].VLAN.ID = 101
	intended := cliRenderNoSysctls(t, in)
	cur := vmReadCurrent(t, tgt, intended)
	st := reconciler.New(reg).Plan(context.Background(), cur, intended)
	preds := host.PredictOps(st.OperationLog, cur)
	sum := host.SummarizeDisruption(st.OperationLog, preds, nil)
	predicted := map[string]string{}
	for _, l := range sum.LinksDown {
		if l.Certain {
			predicted[l.Link] = string(l.Effect)
		}
	}
	var predictedRoutes []string
	for _, w := range sum.Withdrawn {
		if dst, ok := mainIPv4Dst(w.Route); ok {
			predictedRoutes = append(predictedRoutes, dst)
		}
	}
	wantLinks := map[string]string{"eth2": "flap", "bond0.100": "recreate"}
	if !maps.Equal(predicted, wantLinks) {
		t.Errorf("plan: links down %v, want %v\n%s", predicted, wantLinks, st.OperationLog)
	}
	wantRoutes := []string{"10.100.0.0/24", "10.200.0.0/16"}
	if got := sorted(predictedRoutes); !slices.Equal(got, wantRoutes) {
		t.Errorf("plan: routes withdrawn %v, want %v", got, wantRoutes)
	}

	before := linkIndexes(t, tgt)
	routesBefore := mainIPv4Routes(t, tgt)
	mon := monitorKernel(t, tgt)
	cliVMApply(t, tgt, reg, intended)
	seen := mon.until(t, tgt)
	after := linkIndexes(t, tgt)
	for _, r := range routesBefore {
		if !slices.Contains(mainIPv4Routes(t, tgt), r) {
			seen.routesDeleted = append(seen.routesDeleted, r)
		}
	}
	var recreated []string
	for name, idx := range before {
		if n, ok := after[name]; ok && n != idx {
			recreated = append(recreated, name)
		}
	}
	if !slices.Equal(recreated, []string{"bond0.100"}) {
		t.Errorf("kernel: ifindex changed for %v; the plan predicted a recreate of bond0.100", recreated)
	}
	if down := slices.Sorted(maps.Keys(seen.down)); !slices.Equal(down, slices.Sorted(maps.Keys(predicted))) {
		t.Errorf("kernel: links that went down or away %v; the plan predicted %v", down, predicted)
	}
	if got := sorted(seen.routesDeleted); !slices.Equal(got, sorted(predictedRoutes)) {
		t.Errorf("kernel: IPv4 main routes deleted %v; the plan predicted %v", got, predictedRoutes)
	}
}

// vmReadCurrent reads the namespace back as cliVMApply does.
func vmReadCurrent(t *testing.T, tgt *netnsx.Target, intended *dg.Graph) *dg.Graph {
	t.Helper()
	var cur []dg.Item
	linkReadBack := func(tgt *netnsx.Target, hint *dg.Graph) ([]dg.Item, error) { return link.ReadBack(tgt, "", hint) }
	for _, read := range []func(*netnsx.Target, *dg.Graph) ([]dg.Item, error){linkReadBack, func(tgt *netnsx.Target, hint *dg.Graph) ([]dg.Item, error) { return l3.ReadBack(tgt, "", hint) }} {
		got, err := read(tgt, intended)
		if err != nil {
			t.Fatal(err)
		}
		cur = append(cur, got...)
	}
	return dg.New("current", cur...)
}
