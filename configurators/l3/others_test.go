package l3

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// readOthers takes the others' addresses, routes, rules and permanent
// neighbours as items, never netagent's; the kernel's own (the default
// rules, proto kernel routes, IPv6 link-local addresses, the neighbour
// cache) are left out, or with all Foreign with their Why.
func TestReadOthers(t *testing.T) {
	k := NewFakeKernel("up0")
	k.addAddr("up0", "192.0.2.10/24", 0)
	k.addAddr("up0", "192.0.2.11/24", items.RouteProtocol) // netagent's
	k.addAddr("up0", "fe80::1/64", ifaProtoKernelLL)
	k.addRoute(netlink.Route{Family: unix.AF_INET, Dst: ipnet("10.8.0.0/16"), LinkIndex: 2, Table: 100, Protocol: unix.RTPROT_BOOT})
	k.addRoute(netlink.Route{Family: unix.AF_INET, Dst: ipnet("10.9.0.0/16"), LinkIndex: 2, Protocol: items.RouteProtocol})
	k.addRoute(netlink.Route{Family: unix.AF_INET, Dst: ipnet("10.10.0.0/16"), LinkIndex: 2, Protocol: rtprotDHCP})
	r := netlink.NewRule()
	r.Family, r.Priority, r.Table, r.Src = unix.AF_INET, 100, 100, ipnet("192.0.2.0/24")
	k.addRule(r)
	k.addNeigh("up0", "192.0.2.5", "02:00:00:00:00:05", netlink.NUD_PERMANENT, 0)
	k.addNeigh("up0", "192.0.2.6", "02:00:00:00:00:06", netlink.NUD_REACHABLE, 0)

	describe := func(all bool) []string {
		got, err := readOthers(k, all)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range got {
			if f, ok := it.(*items.Foreign); ok {
				if f.Why == "" {
					t.Errorf("%s without a why", f.Name())
				}
				out = append(out, "foreign "+f.Kind)
				continue
			}
			if r, ok := it.(*items.Rule); ok {
				out = append(out, "rule "+r.Name())
				continue
			}
			out = append(out, dg.Ref(it).String())
		}
		return out
	}
	plain := describe(false)
	want := []string{
		dg.Ref(&items.Address{Dev: "up0", Prefix: netip.MustParsePrefix("192.0.2.10/24")}).String(),
		dg.Ref(&items.Route{Dst: netip.MustParsePrefix("10.8.0.0/16"), Table: 100}).String(),
		"foreign route", // learned from DHCP
		"rule ipv4 100: from 192.0.2.0/24 lookup 100",
		dg.Ref(&items.Neighbor{Dev: "up0", IP: netip.MustParsePrefix("192.0.2.5/32").Addr()}).String(),
	}
	if !slices.Equal(plain, want) {
		t.Errorf("got\n%q\nwant\n%q", plain, want)
	}
	all := describe(true)
	if n := len(all) - len(plain); n < 1+5 { // the link-local address, the 5 default rules
		t.Errorf("with all, %d more objects, want the kernel's own:\n%q", n, all)
	}
	if slices.Contains(all, dg.Ref(&items.Address{Dev: "up0", Prefix: netip.MustParsePrefix("192.0.2.11/24")}).String()) {
		t.Errorf("netagent's address read as another's: %q", all)
	}
}
