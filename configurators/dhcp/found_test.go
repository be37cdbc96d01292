package dhcp

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

func foundAddr(cidr string, flags, valid int) netlink.Addr {
	ip, n, _ := net.ParseCIDR(cidr)
	n.IP = ip
	return netlink.Addr{IPNet: n, Flags: flags, ValidLft: valid, PreferedLft: valid}
}

func foundRoute(dst, gw, src string, metric int) netlink.Route {
	r := netlink.Route{Gw: net.ParseIP(gw), Src: net.ParseIP(src), Priority: metric}
	if dst != "" {
		_, r.Dst, _ = net.ParseCIDR(dst)
	}
	return r
}

// The lease another client left is its address of finite lifetime (not a
// static one, not a secondary), taken as half spent (T1 now, expiring
// with the address), with the gateway of its default route: the one from
// the address first, else the lowest metric.
func TestFoundLease(t *testing.T) {
	now := time.Date(2026, 12, 2, 20, 0, 0, 0, time.UTC)
	addrs := []netlink.Addr{
		foundAddr("192.0.2.5/24", unix.IFA_F_PERMANENT, 0xffffffff),
		foundAddr("198.51.100.9/24", unix.IFA_F_SECONDARY, 300),
		foundAddr("10.77.0.120/24", 0, 600),
	}
	routes := []netlink.Route{
		foundRoute("", "192.0.2.1", "", 0),
		foundRoute("0.0.0.0/0", "10.77.0.1", "10.77.0.120", 100),
		foundRoute("10.77.0.1/32", "", "10.77.0.120", 100),
		foundRoute("0.0.0.0/0", "10.77.0.2", "", 50),
	}
	l := FoundLease("up0", addrs, routes, now)
	if l == nil {
		t.Fatal("no lease found")
	}
	if l.Address != netip.MustParsePrefix("10.77.0.120/24") || l.Router != netip.MustParseAddr("10.77.0.1") ||
		l.Obtained != ObtainedFound || l.Server.IsValid() {
		t.Errorf("found %+v", l)
	}
	if !l.Expires().Equal(now.Add(10*time.Minute)) || !l.RenewAt().Equal(now) {
		t.Errorf("expires %v renews %v, want the address's end and now", l.Expires(), l.RenewAt())
	}
	if l := FoundLease("up0", addrs[:1], routes, now); l != nil {
		t.Errorf("a static address makes the lease %+v", l)
	}
	if l := FoundLease("up0", addrs[2:], routes[2:], now); l == nil || l.Router != netip.MustParseAddr("10.77.0.2") {
		t.Errorf("without a default route from the address: %+v, want the gateway of the lowest metric's", l)
	}
	if l := FoundLease("up0", addrs[2:], nil, now); l == nil || l.Router.IsValid() {
		t.Errorf("without a default route: %+v, want no router", l)
	}
}

// A found lease reads back Kept where the intent has its lease item (and
// nothing holds or keeps one), and the lease item's create asks the
// server for its address (INIT-REBOOT); it is never released.
func TestFoundLeaseAskedFor(t *testing.T) {
	now := time.Now()
	found := &Lease{Interface: "eth0", Address: netip.MustParsePrefix("192.0.2.10/24"), LeaseTime: 20 * time.Minute,
		Renew: 10 * time.Minute, Rebind: 17 * time.Minute, Acquired: now.Add(-10 * time.Minute), Obtained: ObtainedFound}
	leases := &Leases{}
	leases.SetFound(map[string]*Lease{"eth0": found, "eth1": {Interface: "eth1", Address: netip.MustParsePrefix("192.0.2.11/24"),
		LeaseTime: time.Hour, Acquired: now}})
	hint := dg.New("intended")
	hint.Put(&items.DHCP4Lease{Dev: "eth0", Hostname: "edge-1", CarrierLink: "eth0"})
	got := ReadBack(leases, t.TempDir(), hint, now)
	if len(got) != 1 || !got[0].(*items.DHCP4Lease).Kept || got[0].(*items.DHCP4Lease).Hostname != "edge-1" {
		t.Fatalf("read back %v, want eth0's lease item Kept (eth1 has none intended)", got)
	}

	x := &tellingExchanger{fakeExchanger: &fakeExchanger{ack: ack(t)}}
	c := &Configurator{Client: &Client{X: x}, Leases: leases, StateDir: t.TempDir()}
	if err := c.acquire(context.Background(), &items.DHCP4Lease{Dev: "eth0"}, true); err != nil {
		t.Fatal(err)
	}
	if x.sent == nil || x.sent.RequestedIPAddress().String() != "192.0.2.10" || x.dest.IsValid() {
		t.Errorf("sent %v to %v, want a broadcast REQUEST of 192.0.2.10", x.sent, x.dest)
	}
	if l := leases.Get("eth0"); l == nil || l.Obtained != ObtainedReboot {
		t.Errorf("held %+v, want the server's answer", l)
	}
	if err := c.Delete(context.Background(), &items.DHCP4Lease{Dev: "eth1"}); err != nil {
		t.Fatal(err)
	}
	if x.told > 0 {
		t.Error("a found lease was released")
	}
}

// tellingExchanger counts the messages a client sends without an answer
// (a DHCPRELEASE).
type tellingExchanger struct {
	*fakeExchanger
	told int
}

func (x *tellingExchanger) Tell(context.Context, string, ...dhcpv4.Modifier) error {
	x.told++
	return nil
}
