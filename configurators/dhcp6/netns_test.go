package dhcp6

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/internal/dnsmasqtest"
	"github.com/netagent/netagent/internal/testns"
)

// A real server (dnsmasq, in a peer namespace) grants an address from its
// range with its DNS server and search domain, to a client that waits for
// its link-local address first (the veth has just come up: DAD runs); a
// second exchange asking for that address gets it again.
func TestAcquireFromDnsmasq(t *testing.T) {
	client := testns.New(t)
	dnsmasqtest.Start(t, client, "up0", dnsmasqtest.Options{DHCP6: true, Domain: "lan.example"})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := &Client{X: &NetnsExchanger{Target: client}}
	l, err := c.Acquire(ctx, "up0", netip.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	if a := l.Address; a.Less(dnsmasqtest.Range6First) || dnsmasqtest.Range6Last.Less(a) {
		t.Errorf("address %v, want one in %v-%v", a, dnsmasqtest.Range6First, dnsmasqtest.Range6Last)
	}
	if !slices.Equal(l.DNS, []netip.Addr{dnsmasqtest.DNS6}) || !slices.Equal(l.Search, []string{"lan.example"}) {
		t.Errorf("DNS %v search %v, want %v and lan.example", l.DNS, l.Search, dnsmasqtest.DNS6)
	}
	if l.Valid != 2*time.Minute || l.Server == "" {
		t.Errorf("valid %v server %q", l.Valid, l.Server)
	}
	again, err := c.Acquire(ctx, "up0", l.Address)
	if err != nil {
		t.Fatal(err)
	}
	if again.Address != l.Address {
		t.Errorf("asked for %v again, got %v", l.Address, again.Address)
	}
}

// Without IPv6 on the link there is no link-local address: the exchange
// fails once the wait for it ends, naming the interface.
func TestAcquireNoLinkLocal(t *testing.T) {
	client := testns.New(t)
	testns.Exec(t, client, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
	testns.Exec(t, client, "ip", "link", "add", "up0", "type", "veth", "peer", "name", "up0p")
	testns.Exec(t, client, "ip", "link", "set", "up0", "up")
	c := &Client{X: &NetnsExchanger{Target: client, LinkLocalWait: 200 * time.Millisecond}}
	_, err := c.Acquire(context.Background(), "up0", netip.Addr{})
	if err == nil || !errors.Is(err, ErrNoLinkLocal) {
		t.Fatalf("error %v, want ErrNoLinkLocal", err)
	}
}

// An optimistic link-local address (optimistic_dad) is usable while its
// duplicate address detection runs (RFC 4429): the wait returns it at
// once rather than after DAD (20 s here: one solicitation, retrans_time_ms
// 20000). Before, the wait ran out with ErrNoLinkLocal.
func TestWaitLinkLocalOptimistic(t *testing.T) {
	client := testns.New(t)
	testns.Exec(t, client, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
	testns.Exec(t, client, "ip", "link", "add", "up0", "type", "veth", "peer", "name", "up0p")
	testns.Exec(t, client, "sysctl", "-qw", "net.ipv6.conf.up0.optimistic_dad=1", "net.ipv6.neigh.up0.retrans_time_ms=20000")
	testns.Exec(t, client, "ip", "link", "set", "up0p", "up")
	testns.Exec(t, client, "ip", "link", "set", "up0", "up")
	testns.Exec(t, client, "sysctl", "-qw", "net.ipv6.conf.up0.disable_ipv6=0")
	x := &NetnsExchanger{Target: client}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	ll, err := x.waitLinkLocal(ctx, "up0")
	if err != nil || !ll.IsLinkLocalUnicast() {
		t.Fatalf("link-local %v, error %v; the kernel has:\n%s", ll, err, testns.Exec(t, client, "ip", "-6", "addr", "show", "dev", "up0"))
	}
	if out := testns.Exec(t, client, "ip", "-6", "addr", "show", "dev", "up0"); !strings.Contains(out, "optimistic") {
		t.Errorf("the link-local address is not optimistic: the test does not test what it means to:\n%s", out)
	}
}
