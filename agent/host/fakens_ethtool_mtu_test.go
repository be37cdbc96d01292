package host

import (
	"context"
	"slices"
	"testing"

	"github.com/netagent/netagent/configurators"
	"github.com/netagent/netagent/configurators/ethtool"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// resettingNIC is eth0 of the fake namespace as an e1000 whose driver
// resets its rings to 256 on an MTU change (as some drivers reallocate
// them).
func resettingNIC(t *testing.T) (*Runtime, *configurators.Fake, *ethtool.FakeNIC) {
	rt, f := fakeRuntime(t)
	nic := f.Ethtool.AddE1000("eth0", 2)
	nic.ResetOnMTU = map[string]map[string]uint32{"rings": {"rx": 256, "tx": 256}}
	return rt, f, nic
}

// ringsAt is eth0 at mtu with rx rings 4096, as render gives it: the
// ethtool item follows the interface's MTU.
func ringsAt(mtu int) *dg.Graph {
	return dg.New("intended", &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true, MTU: mtu},
		&items.Ethtool{Interface: "eth0", Settings: map[string]uint32{"rings/rx": 4096}, MTU: mtu})
}

// rxRings reads eth0's rx rings as ethtool -g would: through the fake,
// which shows a reset the driver made with an MTU change.
func rxRings(t *testing.T, f *configurators.Fake) uint32 {
	t.Helper()
	v, err := f.Ethtool.Get("rings", 2)
	if err != nil {
		t.Fatal(err)
	}
	return v.Cur["rx"]
}

// indexOf is the position of the first operation on ref, -1 if none.
func indexOf(ops reconciler.OperationLog, ref dg.ItemRef) int {
	return slices.IndexFunc(ops, func(e reconciler.OpLogEntry) bool { return e.Ref == ref })
}

// TestFakeNamespaceRingsAfterMTU: one apply changes the MTU and the rings
// of a NIC whose driver resets its rings on an MTU change, and ends with
// the intended rings (the ethtool item's operation after the link's, one
// ring write); a second apply writes nothing. An apply that changes the
// MTU only writes the rings again, once, after the link's modify; again,
// a second apply writes nothing.
func TestFakeNamespaceRingsAfterMTU(t *testing.T) {
	ctx := context.Background()
	rt, f, _ := resettingNIC(t)
	for _, mtu := range []int{9000, 1500} {
		writes := f.Ethtool.Writes
		res, err := rt.Apply(ctx, ringsAt(mtu), ApplyOptions{})
		if err != nil || !res.Converged() {
			t.Fatalf("apply at mtu %d: %v %+v", mtu, err, res.Problems)
		}
		link, et := indexOf(res.Ops, items.InterfaceRef("eth0")), indexOf(res.Ops, items.EthtoolRef("eth0"))
		if link < 0 || et < link {
			t.Errorf("mtu %d: the ethtool operation is not after the link's:\n%s", mtu, res.Ops)
		}
		if got := rxRings(t, f); got != 4096 || f.Ethtool.Writes != writes+1 {
			t.Errorf("mtu %d: rx rings %d after %d writes, want 4096 after one", mtu, got, f.Ethtool.Writes-writes)
		}
		writes = f.Ethtool.Writes
		if res, err := rt.Apply(ctx, ringsAt(mtu), ApplyOptions{}); err != nil || len(res.Ops) != 0 || f.Ethtool.Writes != writes {
			t.Errorf("mtu %d, second apply: %v %s, %d writes", mtu, err, res.Ops, f.Ethtool.Writes-writes)
		}
	}
}

// TestFakeNamespaceRingsAfterMTUInOneReconcile: one reconcile (what the
// daemon runs for a change, before any drift check) leaves the rings
// intended after an MTU change, because the MTU change modifies the
// ethtool item too; an ethtool item that followed no MTU would be left
// with the rings the driver reset (the fake's reset is real).
func TestFakeNamespaceRingsAfterMTUInOneReconcile(t *testing.T) {
	ctx := context.Background()
	for _, follows := range []bool{true, false} {
		rt, f, _ := resettingNIC(t)
		if res, err := rt.Apply(ctx, ringsAt(1500), ApplyOptions{}); err != nil || !res.Converged() {
			t.Fatalf("apply: %v %+v", err, res.Problems)
		}
		intended := ringsAt(9000)
		if !follows {
			intended = dg.New("intended", &items.Interface{IfName: "eth0", Kind: items.KindPhysical, AdminUp: true, MTU: 9000},
				&items.Ethtool{Interface: "eth0", Settings: map[string]uint32{"rings/rx": 4096}})
		}
		k := rt.Kernel()
		cur, err := k.ReadCurrent(ctx, intended)
		if err != nil {
			t.Fatal(err)
		}
		if res := applyPass(ctx, k, cur, intended); !res.Converged() {
			t.Fatalf("follows %v: %+v", follows, res.Problems)
		}
		want := uint32(4096)
		if !follows {
			want = 256
		}
		if got := rxRings(t, f); got != want {
			t.Errorf("follows the MTU %v: rx rings %d after one reconcile, want %d", follows, got, want)
		}
	}
}
