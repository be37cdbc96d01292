package host

import (
	"context"
	"strings"
	"testing"

	"github.com/netagent/netagent/configurators"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// Over the fake namespace: plan predicts a fixed feature's refusal and
// apply fails that item only; the settings the NIC takes are applied,
// checked, applied again with no write, and given back when they leave.
func TestFakeNamespaceEthtool(t *testing.T) {
	ctx := context.Background()
	rt, f := fakeRuntime(t)
	nic := f.Ethtool.AddVeth("eth0", 2)
	eth0 := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true, MTU: 1400}
	bad := dg.New("intended", eth0, &items.Ethtool{Interface: "eth0", Settings: map[string]uint32{"features/rx-lro": 1}})
	plan, err := rt.Plan(ctx, bad)
	if err != nil || plan.Converged() || !strings.Contains(plan.Problems[0].String(), "feature rx-lro of eth0 is fixed") {
		t.Fatalf("plan of a fixed feature: %v %+v", err, plan.Problems)
	}
	res, err := rt.Apply(ctx, bad, ApplyOptions{})
	if err != nil || res.Converged() || len(res.Problems) != 1 {
		t.Fatalf("apply of a fixed feature: %v %+v", err, res.Problems)
	}
	good := dg.New("intended", eth0, &items.Ethtool{Interface: "eth0", Settings: map[string]uint32{"features/rx-gro": 1, "channels/rx": 2}})
	applyTwice(t, rt, f, good)
	if res, err := rt.Apply(ctx, dg.New("intended", eth0), ApplyOptions{}); err != nil || !res.Converged() {
		t.Fatalf("apply without the settings: %v %+v", err, res.Problems)
	}
	if nic.Features.Active["rx-gro"] || nic.Groups["channels"].Cur["rx"] != 1 {
		t.Errorf("not given back: gro %v, rx %d", nic.Features.Active["rx-gro"], nic.Groups["channels"].Cur["rx"])
	}
}

// applyTwice applies g over the fake: it converges, check finds nothing
// to do, and a second apply runs no operation and writes nothing.
func applyTwice(t *testing.T, rt *Runtime, f *configurators.Fake, g *dg.Graph) {
	t.Helper()
	ctx := context.Background()
	if res, err := rt.Apply(ctx, g, ApplyOptions{}); err != nil || !res.Converged() {
		t.Fatalf("apply: %v %+v", err, res.Problems)
	}
	if rep, err := rt.Check(g); err != nil || !rep.Converged() {
		t.Fatalf("check: %v %v", err, rep.Diffs)
	}
	writes := f.Ethtool.Writes
	if res, err := rt.Apply(ctx, g, ApplyOptions{}); err != nil || len(res.Ops) != 0 || f.Ethtool.Writes != writes {
		t.Errorf("second apply: %v %s, %d writes", err, res.Ops, f.Ethtool.Writes-writes)
	}
}
