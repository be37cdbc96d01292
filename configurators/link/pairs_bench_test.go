package link_test

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// benchPairs is how many bridge+vxlan pairs each BenchmarkPairs iteration
// creates.
const benchPairs = 100

// BenchmarkPairs creates benchPairs bridges and as many VXLANs over a veth
// uplink, then their ports, as the reconciler hands them over: each kind's
// creates in one batch when the configurator takes batches (one wave),
// one by one otherwise. The links are deleted between iterations, outside
// the timer.
func BenchmarkPairs(b *testing.B) {
	tgt := testns.New(b)
	if out, err := exec.Command("ip", "-n", tgt.Name, "link", "add", "uplink0", "up", "type", "veth", "peer", "name", "uplink0p").CombinedOutput(); err != nil {
		b.Fatalf("adding uplink0: %v\n%s", err, out)
	}
	reg := &reconciler.TypeRegistry{}
	if err := link.Register(reg, tgt, b.TempDir()); err != nil {
		b.Fatal(err)
	}
	var links, ports []dg.Item
	for i := range benchPairs {
		br, vx := fmt.Sprintf("br%d", i), fmt.Sprintf("vx%d", i)
		links = append(links,
			&items.Interface{IfName: br, Kind: items.KindBridge, AdminUp: true, Attrs: &items.BridgeAttrs{}},
			&items.Interface{IfName: vx, Kind: items.KindVxlan, AdminUp: true, Attrs: &items.VxlanAttrs{
				VNI: uint32(i + 1), Local: netip.MustParseAddr("192.0.2.10"), Remote: netip.MustParseAddr("192.0.2.20"),
				Port: 4789, Parent: "uplink0"}})
		ports = append(ports, &items.Port{IfName: vx, Master: br, MasterKind: items.KindBridge})
	}
	ctx := context.Background()
	var cpu time.Duration
	for b.Loop() {
		start := cpuTime(b)
		apply(b, ctx, reg, reconciler.OpCreate, links)
		apply(b, ctx, reg, reconciler.OpCreate, ports)
		cpu += cpuTime(b) - start
		b.StopTimer()
		apply(b, ctx, reg, reconciler.OpDelete, links)
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's user and system CPU time so far (the kernel's
// work for our netlink requests is system time of the sending thread).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// apply runs op on every item, as one batch when the configurator takes
// batches.
func apply(b *testing.B, ctx context.Context, reg *reconciler.TypeRegistry, op reconciler.Operation, all []dg.Item) {
	b.Helper()
	cfg := reg.Configurator(all[0])
	if bc, ok := cfg.(reconciler.BatchConfigurator); ok {
		ops := make([]reconciler.BatchOp, len(all))
		for i, it := range all {
			ops[i] = reconciler.BatchOp{Op: op}
			if op == reconciler.OpDelete {
				ops[i].Old = it
			} else {
				ops[i].New = it
			}
		}
		for i, err := range bc.ApplyBatch(ctx, ops) {
			if err != nil {
				b.Fatalf("%v %s: %v", op, dg.Ref(all[i]), err)
			}
		}
		return
	}
	for _, it := range all {
		var err error
		if op == reconciler.OpDelete {
			err = cfg.Delete(ctx, it)
		} else {
			err = cfg.Create(ctx, it)
		}
		if err != nil {
			b.Fatalf("%v %s: %v", op, dg.Ref(it), err)
		}
	}
}
