package l3_test

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"github.com/netagent/netagent/configurators/l3"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink"
)

// benchRoutes is how many routes each benchmark iteration creates.
const benchRoutes = 10000

// benchEnv is a namespace with a veth (up0, 10.0.0.2/24, up) and the l3
// configurators.
func benchEnv(b *testing.B) (*netnsx.Target, reconciler.BatchConfigurator, []*items.Route) {
	b.Helper()
	tgt := testns.New(b)
	la := netlink.NewLinkAttrs()
	la.Name = "up0"
	if err := tgt.NL.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: "peer0"}); err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"up0", "peer0"} {
		l, err := tgt.NL.LinkByName(name)
		if err != nil {
			b.Fatal(err)
		}
		if err := tgt.NL.LinkSetUp(l); err != nil {
			b.Fatal(err)
		}
	}
	up0, _ := tgt.NL.LinkByName("up0")
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: net.IPv4(10, 0, 0, 2), Mask: net.CIDRMask(24, 32)}}
	if err := tgt.NL.AddrAdd(up0, addr); err != nil {
		b.Fatal(err)
	}
	reg := &reconciler.TypeRegistry{}
	if err := l3.Register(reg, tgt); err != nil {
		b.Fatal(err)
	}
	routes := make([]*items.Route, benchRoutes)
	for i := range routes {
		dst := netip.AddrFrom4([4]byte{172, 16 + byte(i>>16), byte(i >> 8), byte(i)})
		routes[i] = &items.Route{Dst: netip.PrefixFrom(dst, 32), Gw: netip.MustParseAddr("10.0.0.1"), Dev: "up0"}
	}
	cfg := reg.Configurator(routes[0]).(reconciler.BatchConfigurator)
	return tgt, cfg, routes
}

func batchOf(op reconciler.Operation, routes []*items.Route) []reconciler.BatchOp {
	ops := make([]reconciler.BatchOp, len(routes))
	for i, r := range routes {
		ops[i] = reconciler.BatchOp{Op: op}
		if op == reconciler.OpCreate {
			ops[i].New = r
		} else {
			ops[i].Old = r
		}
	}
	return ops
}

// cleanup deletes the routes in one batch, outside the timer.
func cleanup(b *testing.B, cfg reconciler.BatchConfigurator, routes []*items.Route) {
	b.StopTimer()
	defer b.StartTimer()
	for _, err := range cfg.ApplyBatch(context.Background(), batchOf(reconciler.OpDelete, routes)) {
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRouteCreate10k compares creating 10,000 routes one Create at a
// time, in one ApplyBatch, and with netlink.Handle.RouteAdd (one request
// and one ack at a time, no ownership checks: the library's own speed).
func BenchmarkRouteCreate10k(b *testing.B) {
	ctx := context.Background()
	b.Run("one-by-one", func(b *testing.B) {
		_, cfg, routes := benchEnv(b)
		for range b.N {
			for _, r := range routes {
				if err := cfg.Create(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
			cleanup(b, cfg, routes)
		}
	})
	b.Run("batched", func(b *testing.B) {
		_, cfg, routes := benchEnv(b)
		ops := batchOf(reconciler.OpCreate, routes)
		for range b.N {
			for _, err := range cfg.ApplyBatch(ctx, ops) {
				if err != nil {
					b.Fatal(err)
				}
			}
			cleanup(b, cfg, routes)
		}
	})
	b.Run("netlink-handle", func(b *testing.B) {
		tgt, cfg, routes := benchEnv(b)
		up0, _ := tgt.NL.LinkByName("up0")
		for range b.N {
			for _, r := range routes {
				nr := &netlink.Route{
					Dst:       &net.IPNet{IP: r.Dst.Addr().AsSlice(), Mask: net.CIDRMask(32, 32)},
					Gw:        r.Gw.AsSlice(),
					LinkIndex: up0.Attrs().Index,
					Protocol:  items.RouteProtocol,
				}
				if err := tgt.NL.RouteAdd(nr); err != nil {
					b.Fatal(err)
				}
			}
			cleanup(b, cfg, routes)
		}
	})
}

// BenchmarkRouteDelete10k deletes 10,000 routes one Delete at a time and
// in one ApplyBatch.
func BenchmarkRouteDelete10k(b *testing.B) {
	ctx := context.Background()
	setup := func(b *testing.B, cfg reconciler.BatchConfigurator, routes []*items.Route) {
		b.StopTimer()
		defer b.StartTimer()
		for _, err := range cfg.ApplyBatch(ctx, batchOf(reconciler.OpCreate, routes)) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("one-by-one", func(b *testing.B) {
		_, cfg, routes := benchEnv(b)
		for range b.N {
			setup(b, cfg, routes)
			for _, r := range routes {
				if err := cfg.Delete(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("batched", func(b *testing.B) {
		_, cfg, routes := benchEnv(b)
		ops := batchOf(reconciler.OpDelete, routes)
		for range b.N {
			setup(b, cfg, routes)
			for _, err := range cfg.ApplyBatch(ctx, ops) {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
