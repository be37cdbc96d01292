package dhcp6

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/internal/dnsmasqtest"
	"github.com/netagent/netagent/internal/testns"
	"github.com/vishvananda/netlink"
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

// Without IPv6 on the link there is no link-local address and none will
// come: the exchange fails at once (not after the 10 s wait), naming the
// interface and why.
func TestAcquireNoLinkLocal(t *testing.T) {
	client := testns.New(t)
	testns.Exec(t, client, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
	testns.Exec(t, client, "ip", "link", "add", "up0", "type", "veth", "peer", "name", "up0p")
	testns.Exec(t, client, "ip", "link", "set", "up0p", "up")
	testns.Exec(t, client, "ip", "link", "set", "up0", "up")
	c := &Client{X: &NetnsExchanger{Target: client}}
	begin := time.Now()
	_, err := c.Acquire(context.Background(), "up0", netip.Addr{})
	if err == nil || !errors.Is(err, ErrNoLinkLocal) || !strings.Contains(err.Error(), "up0") || !strings.Contains(err.Error(), "disable_ipv6") {
		t.Fatalf("error %v, want ErrNoLinkLocal naming up0 and disable_ipv6", err)
	}
	if d := time.Since(begin); d > time.Second {
		t.Errorf("failed after %v, want at once", d)
	}
}

// A link whose kernel makes no link-local address (addrgenmode none) and
// that has none fails at once, saying so. Before, the wait ran its 10 s.
func TestWaitLinkLocalAddrGenNone(t *testing.T) {
	client := testns.New(t)
	testns.Exec(t, client, "ip", "link", "add", "up0", "type", "veth", "peer", "name", "up0p")
	testns.Exec(t, client, "ip", "link", "set", "up0", "addrgenmode", "none")
	testns.Exec(t, client, "ip", "link", "set", "up0p", "up")
	testns.Exec(t, client, "ip", "link", "set", "up0", "up")
	x := &NetnsExchanger{Target: client}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	begin := time.Now()
	_, err := x.waitLinkLocal(ctx, "up0")
	if err == nil || !errors.Is(err, ErrNoLinkLocal) || !strings.Contains(err.Error(), "up0") || !strings.Contains(err.Error(), "addrgenmode none") {
		t.Fatalf("error %v, want ErrNoLinkLocal naming up0 and addrgenmode none", err)
	}
	if d := time.Since(begin); d > time.Second {
		t.Errorf("failed after %v, want at once", d)
	}
}

// With a long duplicate address detection (retrans_time_ms 12000: about
// 12 s, as TestAgentCLIDHCP6LateLeaseApplied in test/netns sets) a
// v6-only acquisition waits for the tentative link-local address as long
// as the interface's DAD takes, and gets its lease. Before, the wait gave
// up after a fixed 10 s with ErrNoLinkLocal.
func TestAcquireLongDAD(t *testing.T) {
	t.Parallel()
	client := testns.New(t)
	dnsmasqtest.Start(t, client, "up0", dnsmasqtest.Options{DHCP6: true})
	testns.Exec(t, client, "sysctl", "-qw", "net.ipv6.conf.up0.disable_ipv6=1", "net.ipv6.neigh.up0.retrans_time_ms=12000")
	testns.Exec(t, client, "sysctl", "-qw", "net.ipv6.conf.up0.disable_ipv6=0")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := &Client{X: &NetnsExchanger{Target: client}}
	begin := time.Now()
	l, err := c.Acquire(ctx, "up0", netip.Addr{})
	if err != nil {
		t.Fatalf("%v after %v; the kernel has:\n%s", err, time.Since(begin), testns.Exec(t, client, "ip", "-6", "addr", "show", "dev", "up0"))
	}
	if a := l.Address; a.Less(dnsmasqtest.Range6First) || dnsmasqtest.Range6Last.Less(a) {
		t.Errorf("address %v, want one in %v-%v", a, dnsmasqtest.Range6First, dnsmasqtest.Range6Last)
	}
	if d := time.Since(begin); d < 10*time.Second {
		t.Errorf("acquired after %v: DAD did not take the 12 s the test means to wait for", d)
	}
}

// Every wait closes its address subscription and drains it, so that the
// netlink library's reader goroutine is not left blocked on a full
// channel while address events keep arriving. Before, each wait could
// leave one goroutine behind for good.
func TestWaitLinkLocalNoGoroutineLeak(t *testing.T) {
	client := testns.New(t)
	testns.Exec(t, client, "ip", "link", "add", "up0", "type", "veth", "peer", "name", "up0p")
	testns.Exec(t, client, "sysctl", "-qw", "net.ipv6.conf.up0.optimistic_dad=1")
	testns.Exec(t, client, "ip", "link", "set", "up0p", "up")
	testns.Exec(t, client, "ip", "link", "set", "up0", "up")
	x := &NetnsExchanger{Target: client}
	if _, err := x.waitLinkLocal(context.Background(), "up0"); err != nil {
		t.Fatal(err)
	}
	h, err := netlink.NewHandleAt(client.NsHandle())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	link, err := h.LinkByName("up0p")
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() { // address events, as fast as the kernel makes them
		defer close(stopped)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			a := &netlink.Addr{IPNet: &net.IPNet{IP: net.IPv4(10, 99, byte(i>>8), byte(i)), Mask: net.CIDRMask(32, 32)}}
			if err := h.AddrAdd(link, a); err == nil {
				h.AddrDel(link, a)
			}
		}
	}()
	for range 50 {
		if _, err := x.waitLinkLocal(context.Background(), "up0"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // let events pile up
	}
	close(stop)
	<-stopped
	after := runtime.NumGoroutine()
	for end := time.Now().Add(5 * time.Second); after > before && time.Now().Before(end); after = runtime.NumGoroutine() {
		time.Sleep(50 * time.Millisecond)
	}
	if after > before {
		t.Errorf("%d goroutines before 50 waits, %d after", before, after)
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
