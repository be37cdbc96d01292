package dhcp

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/internal/dnsmasqtest"
	"github.com/netagent/netagent/internal/testns"
)

// A real server (dnsmasq, in a peer namespace) grants a lease on a veth of
// the client's namespace: its address, server, router, DNS, option 121
// routes and times come through; the lease survives the state directory.
func TestAcquireFromDnsmasq(t *testing.T) {
	client := testns.New(t)
	routes := []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("198.51.100.0/24")}
	dnsmasqtest.Start(t, client, "up0", dnsmasqtest.Options{Renew: 30 * time.Second, Routes: routes})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := &Client{X: &NetnsExchanger{Target: client}}
	l, err := c.Acquire(ctx, "up0", Options{Hostname: "edge-1", VendorClass: "netagent"})
	if err != nil {
		t.Fatal(err)
	}
	a := l.Address.Addr()
	if l.Address.Bits() != 24 || a.Less(dnsmasqtest.RangeFirst) || dnsmasqtest.RangeLast.Less(a) {
		t.Errorf("address %v, want a /24 in %v-%v", l.Address, dnsmasqtest.RangeFirst, dnsmasqtest.RangeLast)
	}
	server := dnsmasqtest.ServerAddr.Addr()
	if l.Server != server || l.Router != server {
		t.Errorf("server %v router %v, want %v", l.Server, l.Router, server)
	}
	if len(l.DNS) != 1 || l.DNS[0] != dnsmasqtest.DNS {
		t.Errorf("DNS %v, want %v", l.DNS, dnsmasqtest.DNS)
	}
	want := []Route{{Dst: routes[0], Via: server}, {Dst: routes[1], Via: server}}
	if len(l.Routes) != 2 || l.Routes[0] != want[0] || l.Routes[1] != want[1] {
		t.Errorf("routes %v, want %v", l.Routes, want)
	}
	if l.LeaseTime != 2*time.Minute || l.Renew != 30*time.Second {
		t.Errorf("lease %v renew %v, want 2m and 30s", l.LeaseTime, l.Renew)
	}
	dir := t.TempDir()
	if err := SaveLease(dir, l); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadLease(dir, "up0"); err != nil || got.Address != l.Address {
		t.Errorf("stored lease %+v, %v", got, err)
	}
}

// A link that does not exist in the namespace is an error at once, not a
// wait for the deadline.
func TestAcquireMissingLink(t *testing.T) {
	client := testns.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := (&Client{X: &NetnsExchanger{Target: client}}).Acquire(ctx, "nosuch0", Options{})
	if err == nil || ctx.Err() != nil {
		t.Fatalf("error %v (context %v), want an immediate error", err, ctx.Err())
	}
}

// A lease held (its address on the link) is renewed with the server
// (unicast) and rebound (broadcast), before and after the server
// restarts; a kept lease is asked for again (INIT-REBOOT) and the server
// sees a REQUEST, no DISCOVER; another client's address is refused (NAK).
func TestRenewRebindRebootWithDnsmasq(t *testing.T) {
	client := testns.New(t)
	srv := dnsmasqtest.Start(t, client, "up0", dnsmasqtest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := &Client{X: &NetnsExchanger{Target: client}}
	l, err := c.Acquire(ctx, "up0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	testns.Exec(t, client, "ip", "addr", "add", l.Address.String(), "dev", "up0")
	check := func(what string, got *Lease, err error, how string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v\n%s", what, err, srv.Log())
		}
		if got.Address != l.Address || got.Obtained != how || !got.Acquired.After(l.Acquired) {
			t.Errorf("%s: lease %+v", what, got)
		}
	}
	got, err := c.Renew(ctx, l, Options{})
	check("renew", got, err, ObtainedRenew)
	got, err = c.Rebind(ctx, l, Options{})
	check("rebind", got, err, ObtainedRebind)
	srv.Stop()
	srv.Restart(t)
	got, err = c.Renew(ctx, l, Options{})
	check("renew after the server's restart", got, err, ObtainedRenew)

	discovers := strings.Count(srv.Log(), "DHCPDISCOVER")
	got, err = c.Reboot(ctx, l, Options{})
	check("reboot", got, err, ObtainedReboot)
	if n := strings.Count(srv.Log(), "DHCPDISCOVER"); n != discovers {
		t.Errorf("INIT-REBOOT sent a DISCOVER")
	}
	other := *l
	other.Address = netip.MustParsePrefix("10.77.0.99/24") // outside the range
	if _, err := c.Reboot(ctx, &other, Options{}); !errors.Is(err, ErrNAK) {
		t.Errorf("reboot of an address not ours: %v, want ErrNAK", err)
	}
}
