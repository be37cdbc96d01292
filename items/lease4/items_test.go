package lease4

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/items"
)

// itemLines are the items of a lease, one a line: an address with its
// prefix route's metric, a route as "dst via gw scope metric".
func itemLines(l *Lease, o RouteOptions) []string {
	var out []string
	for _, it := range Items(l, o) {
		switch v := it.(type) {
		case *items.Address:
			out = append(out, fmt.Sprintf("addr %s metric %d", v.Prefix, v.RouteMetric))
		case *items.Route:
			if v.Src != l.Address.Addr() || v.Dev != l.Interface {
				out = append(out, "route without the lease's source or device: "+v.String())
			}
			addr := items.AddressRef(l.Interface, l.Address)
			if v.Gw.IsValid() && !v.OnLink && v.GwAddress != addr.Name || (!v.Gw.IsValid() || v.OnLink) && !slices.Contains(v.Deps, addr) {
				out = append(out, "route not anchored on the lease's address (GwAddress or Deps): "+v.String())
			}
			out = append(out, fmt.Sprintf("route %s via %v onlink=%v scope %d metric %d", v.Dst, v.Gw, v.OnLink, v.Scope, v.Metric))
		}
	}
	return out
}

func mustAddrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

// A lease makes what systemd-networkd makes of it (networkd-dhcp4.c, by
// default): the address, whose prefix route has the lease's metric; the
// default route through the router and a host route to the router on the
// link; or the classless routes, each gateway's host route once; and a
// host route to each DNS server (RoutesToDNS=): on the link in the leased
// subnet, else through the gateway of the classless route that covers it
// best (or the router), none when nothing covers it.
func TestItemsAsNetworkd(t *testing.T) {
	base := func() *Lease {
		return &Lease{Interface: "up0", Address: netip.MustParsePrefix("10.77.0.120/24"), Router: netip.MustParseAddr("10.77.0.1"),
			DNS: mustAddrs("10.77.0.53"), LeaseTime: time.Hour, Acquired: time.Unix(1e9, 0)}
	}
	on := RouteOptions{UseRoutes: true, UseDNS: true, Metric: 100}
	classless := base()
	classless.Routes = []Route{
		{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: netip.MustParseAddr("10.77.0.254")},
		{Dst: netip.MustParsePrefix("198.51.100.0/24"), Via: netip.MustParseAddr("10.77.0.1")},
		{Dst: netip.MustParsePrefix("203.0.113.0/25")},
		{Dst: netip.MustParsePrefix("192.0.2.0/24"), Via: netip.MustParseAddr("10.77.0.1")},
	}
	classless.DNS = mustAddrs("198.51.100.53", "8.8.8.8", "10.77.0.53", "203.0.113.9")
	noDefault := base()
	noDefault.Routes = []Route{{Dst: netip.MustParsePrefix("198.51.100.0/24"), Via: netip.MustParseAddr("10.77.0.1")}}
	noDefault.DNS = mustAddrs("8.8.8.8")
	offLink := base()
	offLink.Router, offLink.DNS = netip.MustParseAddr("192.0.2.1"), mustAddrs("192.0.2.1")
	for _, tc := range []struct {
		name string
		l    *Lease
		o    RouteOptions
		want []string
	}{
		{"router", base(), on, []string{
			"addr 10.77.0.120/24 metric 100",
			"route 10.77.0.1/32 via invalid IP onlink=false scope 253 metric 100",
			"route 0.0.0.0/0 via 10.77.0.1 onlink=false scope 0 metric 100",
			"route 10.77.0.53/32 via invalid IP onlink=false scope 253 metric 100"}},
		{"useDNS false", base(), RouteOptions{UseRoutes: true, Metric: 100}, []string{
			"addr 10.77.0.120/24 metric 100",
			"route 10.77.0.1/32 via invalid IP onlink=false scope 253 metric 100",
			"route 0.0.0.0/0 via 10.77.0.1 onlink=false scope 0 metric 100"}},
		{"useRoutes false", base(), RouteOptions{UseDNS: true, Metric: 100}, []string{"addr 10.77.0.120/24 metric 100"}},
		{"classless", classless, on, []string{
			"addr 10.77.0.120/24 metric 100",
			"route 10.77.0.254/32 via invalid IP onlink=false scope 253 metric 100",
			"route 0.0.0.0/0 via 10.77.0.254 onlink=false scope 0 metric 100",
			"route 10.77.0.1/32 via invalid IP onlink=false scope 253 metric 100",
			"route 198.51.100.0/24 via 10.77.0.1 onlink=false scope 0 metric 100",
			"route 203.0.113.0/25 via invalid IP onlink=false scope 253 metric 100",
			"route 192.0.2.0/24 via 10.77.0.1 onlink=false scope 0 metric 100",
			"route 198.51.100.53/32 via 10.77.0.1 onlink=false scope 0 metric 100",
			"route 8.8.8.8/32 via 10.77.0.254 onlink=false scope 0 metric 100",
			"route 10.77.0.53/32 via invalid IP onlink=false scope 253 metric 100",
			"route 203.0.113.9/32 via invalid IP onlink=false scope 253 metric 100"}},
		{"classless without a default", noDefault, on, []string{
			"addr 10.77.0.120/24 metric 100",
			"route 10.77.0.1/32 via invalid IP onlink=false scope 253 metric 100",
			"route 198.51.100.0/24 via 10.77.0.1 onlink=false scope 0 metric 100"}},
		{"router off the subnet", offLink, on, []string{
			"addr 10.77.0.120/24 metric 100",
			"route 192.0.2.1/32 via invalid IP onlink=false scope 253 metric 100",
			"route 0.0.0.0/0 via 192.0.2.1 onlink=true scope 0 metric 100"}},
	} {
		if got := itemLines(tc.l, tc.o); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, strings.Join(got, "\n     "), strings.Join(tc.want, "\n     "))
		}
	}
}
