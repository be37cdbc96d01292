package l3

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// TestAdoptInKernel: with Options.Adopt, an address without IFA_PROTO
// and a route of protocol boot, both equal to the items, get netagent's
// marks in place: after Create the address reads back as ours and the
// one route of that identity has netagent's protocol (the replace left
// no second route), and netlink events show no deletion. Without Adopt the address is refused.
func TestAdoptInKernel(t *testing.T) {
	tgt := testns.New(t)
	if err := tgt.NL.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "up0"}, PeerName: "peer0"}); err != nil {
		t.Fatal(err)
	}
	up, err := tgt.NL.LinkByName("up0")
	if err != nil {
		t.Fatal(err)
	}
	must(t, tgt.NL.LinkSetUp(up))
	must(t, tgt.NL.AddrAdd(up, &netlink.Addr{IPNet: ipnet("10.78.0.2/24")}))
	must(t, tgt.NL.RouteAdd(&netlink.Route{Dst: ipnet("172.16.9.0/24"), Gw: net.IPv4(10, 78, 0, 1).To4(), LinkIndex: up.Attrs().Index, Protocol: unix.RTPROT_BOOT}))
	a := &items.Address{Dev: "up0", Prefix: netip.MustParsePrefix("10.78.0.2/24")}
	r := &items.Route{Dst: netip.MustParsePrefix("172.16.9.0/24"), Gw: netip.MustParseAddr("10.78.0.1"), Dev: "up0"}
	ctx := context.Background()

	plain := &reconciler.TypeRegistry{}
	must(t, Register(plain, tgt))
	wantNotOwned(t, "the address without adopt", plain.Configurator(a).Create(ctx, a))

	addrs, routesCh := make(chan netlink.AddrUpdate, 64), make(chan netlink.RouteUpdate, 64)
	done := make(chan struct{})
	defer close(done)
	ns := tgt.NsHandle()
	must(t, netlink.AddrSubscribeWithOptions(addrs, done, netlink.AddrSubscribeOptions{Namespace: &ns}))
	must(t, netlink.RouteSubscribeWithOptions(routesCh, done, netlink.RouteSubscribeOptions{Namespace: &ns}))
	reg := &reconciler.TypeRegistry{}
	must(t, RegisterWith(reg, tgt, Options{Adopt: true}))
	must(t, reg.Configurator(a).Create(ctx, a))
	must(t, reg.Configurator(r).Create(ctx, r))
	// Sentinels: their events end the ones of the adoption.
	must(t, tgt.NL.AddrAdd(up, &netlink.Addr{IPNet: ipnet("10.79.0.9/32")}))
	must(t, tgt.NL.RouteAdd(&netlink.Route{Dst: ipnet("172.16.99.0/24"), LinkIndex: up.Attrs().Index}))
	deleted := 0
	for u := range addrs {
		if !u.NewAddr {
			deleted++
			t.Errorf("address deleted during the adoption: %v", u.LinkAddress)
		}
		if u.LinkAddress.String() == "10.79.0.9/32" {
			break
		}
	}
	for u := range routesCh {
		if u.Type == unix.RTM_DELROUTE {
			deleted++
			t.Errorf("route deleted during the adoption: %v", u.Route)
		}
		if u.Dst != nil && u.Dst.String() == "172.16.99.0/24" {
			break
		}
	}
	t.Logf("deletions seen during the adoption: %d", deleted)
	readsBackAs(t, tgt, a)
	routes, err := tgt.NL.RouteListFiltered(unix.AF_INET, &netlink.Route{Dst: ipnet("172.16.9.0/24")}, netlink.RT_FILTER_DST)
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 1 || routes[0].Protocol != items.RouteProtocol {
		t.Errorf("routes of 172.16.9.0/24 after the adoption: %v, want one of protocol %d", routes, items.RouteProtocol)
	}
}
