package l3

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// TestAddressRouteMetricInKernel: an address with a RouteMetric (a
// lease's, as networkd gives it) gets its prefix route at that metric; it
// reads back as the same item; a Modify to another metric moves the
// prefix route in place (the kernel reports no deletion of the address),
// and so does a Create of the item with the first metric again.
func TestAddressRouteMetricInKernel(t *testing.T) {
	tgt, reg := addressNamespace(t, true) // the kernel adds a prefix route on a link that is up
	ctx := context.Background()
	a := &items.Address{Dev: "up0", Prefix: netip.MustParsePrefix("10.77.0.120/24"), RouteMetric: 100}
	c := reg.Configurator(a)
	if err := c.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	if m := prefixRouteMetrics(t, tgt); len(m) != 1 || m[0] != 100 {
		t.Errorf("prefix route metrics %v after the add, want [100]", m)
	}
	readsBackAs(t, tgt, a)
	deleted := watchAddrDeletes(t, tgt)

	moved := *a
	moved.RouteMetric = 200
	if err := c.Modify(ctx, a, &moved); err != nil {
		t.Fatal(err)
	}
	if m := prefixRouteMetrics(t, tgt); len(m) != 1 || m[0] != 200 {
		t.Errorf("prefix route metrics %v after the modify, want [200]", m)
	}
	readsBackAs(t, tgt, &moved)
	if err := c.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	if m := prefixRouteMetrics(t, tgt); len(m) != 1 || m[0] != 100 {
		t.Errorf("prefix route metrics %v after the repair, want [100]", m)
	}
	if n := deleted(); n > 0 {
		t.Errorf("the address was deleted %d times", n)
	}
}

// prefixRouteMetrics are the metrics of the kernel's routes to
// 10.77.0.0/24 on up0.
func prefixRouteMetrics(t *testing.T, tgt *netnsx.Target) []int {
	t.Helper()
	_, dst, _ := net.ParseCIDR("10.77.0.0/24")
	rs, err := tgt.NL.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Dst: dst, Table: unix.RT_TABLE_MAIN},
		netlink.RT_FILTER_DST|netlink.RT_FILTER_TABLE)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, r := range rs {
		out = append(out, r.Priority)
	}
	return out
}

// watchAddrDeletes subscribes to the namespace's address events; the
// returned func waits a moment and counts the deletions seen.
func watchAddrDeletes(t *testing.T, tgt *netnsx.Target) func() int {
	t.Helper()
	ch, done := make(chan netlink.AddrUpdate, 64), make(chan struct{})
	ns := tgt.NsHandle()
	if err := netlink.AddrSubscribeWithOptions(ch, done, netlink.AddrSubscribeOptions{Namespace: &ns}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(done) })
	return func() int {
		n := 0
		for timeout := time.After(300 * time.Millisecond); ; {
			select {
			case u := <-ch:
				if !u.NewAddr {
					n++
				}
			case <-timeout:
				return n
			}
		}
	}
}
