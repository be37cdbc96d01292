package host

import (
	"context"
	"slices"
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// advertising is eth0 advertising modes.
func advertising(modes ...string) *dg.Graph {
	return dg.New("intended", &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true},
		&items.Ethtool{Interface: "eth0", Sets: map[string][]string{items.EthtoolAdvertise: modes}})
}

// Over the fake namespace (an e1000): plan predicts the refusal of a mode
// the NIC lacks, naming the modes it supports, and apply fails that item
// only; the intended modes are applied, checked and applied again with
// no write; someone else's change of the advertised modes is drift that
// check reports (the field Sets only) and an apply repairs with one write.
func TestFakeNamespaceAdvertise(t *testing.T) {
	ctx := context.Background()
	rt, f := fakeRuntime(t)
	nic := f.Ethtool.AddE1000("eth0", 2)
	bad := advertising("10000baseT/Full")
	const refusal = "link advertise of eth0: the NIC does not support 10000baseT/Full (it supports 1000baseT/Full, 100baseT/Full, 100baseT/Half, 10baseT/Full, 10baseT/Half)"
	plan, err := rt.Plan(ctx, bad)
	if err != nil || plan.Converged() || !strings.Contains(plan.Problems[0].String(), "modify failed: refused: "+refusal) {
		t.Fatalf("plan of an unsupported mode: %v %+v", err, plan.Problems)
	}
	res, err := rt.Apply(ctx, bad, ApplyOptions{})
	if err != nil || res.Converged() || len(res.Problems) != 1 || f.Ethtool.Writes != 0 {
		t.Fatalf("apply of an unsupported mode: %v %+v, %d writes", err, res.Problems, f.Ethtool.Writes)
	}
	good := advertising("1000baseT/Full", "100baseT/Full")
	applyTwice(t, rt, f, good)
	writes := f.Ethtool.Writes
	nic.Groups["link"].Sets["advertise"] = []string{"10baseT/Half"} // someone else's ethtool -s
	rep, err := rt.Check(good)
	if err != nil || len(rep.Diffs) != 1 || rep.Diffs[0].Ref != items.EthtoolRef("eth0") {
		t.Fatalf("check after someone else's change: %v %+v", err, rep.Diffs)
	}
	if f := rep.Diffs[0].Fields; len(f) != 1 || f[0].Field != "Sets" || !strings.Contains(f[0].Have, "10baseT/Half") {
		t.Errorf("drift fields %+v, want Sets only, with what someone else set", f)
	}
	if res, err := rt.Apply(ctx, good, ApplyOptions{}); err != nil || !res.Converged() || f.Ethtool.Writes != writes+1 {
		t.Errorf("repair: %v %+v, %d writes", err, res.Problems, f.Ethtool.Writes-writes)
	}
	if got := nic.Groups["link"].Sets["advertise"]; !slices.Equal(got, []string{"1000baseT/Full", "100baseT/Full"}) {
		t.Errorf("after the repair the NIC advertises %v", got)
	}
}
