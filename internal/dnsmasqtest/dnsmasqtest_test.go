package dnsmasqtest

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"github.com/netagent/netagent/internal/testns"
)

// The server hands a client in another namespace a lease carrying the
// router, the DNS server, the renewal time and the classless routes, and
// records it in its lease file.
func TestServesALease(t *testing.T) {
	client := testns.New(t)
	route := netip.MustParsePrefix("192.0.2.0/24")
	srv := Start(t, client, "up0", Options{Renew: 10 * time.Second,
		Routes: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), route}})

	var lease *nclient4.Lease
	err := client.Do(func() error {
		c, err := nclient4.New("up0", nclient4.WithTimeout(2*time.Second), nclient4.WithRetry(10))
		if err != nil {
			return err
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// dnsmasq sends option 121 only to a client that asks for it.
		lease, err = c.Request(ctx, dhcpv4.WithRequestedOptions(dhcpv4.OptionClasslessStaticRoute))
		return err
	})
	if err != nil {
		t.Fatalf("requesting a lease: %v\n%s", err, srv.Log())
	}
	ack := lease.ACK
	if ip, ok := netip.AddrFromSlice(ack.YourIPAddr.To4()); !ok || ip.Less(RangeFirst) || RangeLast.Less(ip) {
		t.Errorf("address %v, want one in %v-%v", ack.YourIPAddr, RangeFirst, RangeLast)
	}
	if r := ack.Router(); len(r) != 1 || !r[0].Equal(net.IP(ServerAddr.Addr().AsSlice())) {
		t.Errorf("router %v, want %v", r, ServerAddr.Addr())
	}
	if d := ack.DNS(); len(d) != 1 || !d[0].Equal(net.IP(DNS.AsSlice())) {
		t.Errorf("DNS %v, want %v", d, DNS)
	}
	if got := ack.IPAddressRenewalTime(0); got != 10*time.Second {
		t.Errorf("T1 %v, want 10s", got)
	}
	if got := ack.IPAddressLeaseTime(0); got != 2*time.Minute {
		t.Errorf("lease time %v, want 2m", got)
	}
	routes := ack.ClasslessStaticRoute()
	if len(routes) != 2 || routes[1].Dest.String() != route.String() {
		t.Errorf("classless routes %v, want 0.0.0.0/0 and %v", routes, route)
	}
	if ack.MessageType() != dhcpv4.MessageTypeAck {
		t.Errorf("message type %v", ack.MessageType())
	}
	if l := srv.Leases(t); len(l) != 1 || !strings.Contains(l[0], ack.YourIPAddr.String()) {
		t.Errorf("lease file %q, want the lease of %v", l, ack.YourIPAddr)
	}
}

// With Options.Command, the server is the wrapper, which gets dnsmasq's
// arguments and execs it: it serves, leaves a trace of the wrapper, and
// Stop kills it (the same pid).
func TestCommandWraps(t *testing.T) {
	client := testns.New(t)
	mark := filepath.Join(t.TempDir(), "wrapped")
	srv := Start(t, client, "up0", Options{Command: []string{"sh", "-c", `touch "$0" && exec ` + tool.Find(t) + ` "$@"`, mark}})
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the wrapper did not run: %v\n%s", err, srv.Log())
	}
	srv.Stop()
	srv.Restart(t)
	if !strings.Contains(srv.Log(), "DHCP, IP range") {
		t.Errorf("dnsmasq did not serve:\n%s", srv.Log())
	}
}
