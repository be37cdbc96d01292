package dhcp

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/rfc1035label"
)

// fakeExchanger answers every REQUEST with ack, recording what was sent.
type fakeExchanger struct {
	ack  *dhcpv4.DHCPv4
	err  error
	sent *dhcpv4.DHCPv4
	dest netip.Addr
	nak  bool
	// began is the Request's round start to report (zero: unknown).
	began time.Time
}

func (f *fakeExchanger) Request(ctx context.Context, ifname string, mods ...dhcpv4.Modifier) (*dhcpv4.DHCPv4, time.Time, error) {
	req, err := dhcpv4.New(mods...)
	if err != nil {
		return nil, time.Time{}, err
	}
	f.sent = req
	return f.ack, f.began, f.err
}

// Send records the REQUEST sent and answers it with ack (a NAK when nak).
func (f *fakeExchanger) Send(ctx context.Context, ifname string, dest netip.Addr, mods ...dhcpv4.Modifier) (*dhcpv4.DHCPv4, error) {
	req, err := dhcpv4.New(mods...)
	if err != nil {
		return nil, err
	}
	f.sent, f.dest = req, dest
	if f.nak {
		return dhcpv4.New(dhcpv4.WithMessageType(dhcpv4.MessageTypeNak))
	}
	return f.ack, f.err
}

func ack(t *testing.T, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	t.Helper()
	base := []dhcpv4.Modifier{
		dhcpv4.WithMessageType(dhcpv4.MessageTypeAck),
		dhcpv4.WithYourIP(net.IPv4(192, 0, 2, 10)),
		dhcpv4.WithNetmask(net.CIDRMask(24, 32)),
		dhcpv4.WithServerIP(net.IPv4(192, 0, 2, 1)),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IPv4(192, 0, 2, 1))),
		dhcpv4.WithRouter(net.IPv4(192, 0, 2, 1)),
		dhcpv4.WithDNS(net.IPv4(192, 0, 2, 53), net.IPv4(198, 51, 100, 53)),
		dhcpv4.WithLeaseTime(3600),
	}
	m, err := dhcpv4.New(append(base, mods...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The ACK becomes the lease, with RFC 2131's default T1 and T2, and the
// options go out as asked.
func TestAcquireFromFake(t *testing.T) {
	at := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
	x := &fakeExchanger{ack: ack(t)}
	c := &Client{X: x, Now: func() time.Time { return at }}
	l, err := c.Acquire(context.Background(), "eth0", Options{Hostname: "edge-1", ClientID: "cid", VendorClass: "netagent"})
	if err != nil {
		t.Fatal(err)
	}
	want := &Lease{Interface: "eth0", Address: netip.MustParsePrefix("192.0.2.10/24"),
		Server: netip.MustParseAddr("192.0.2.1"), Router: netip.MustParseAddr("192.0.2.1"),
		DNS:       []netip.Addr{netip.MustParseAddr("192.0.2.53"), netip.MustParseAddr("198.51.100.53")},
		LeaseTime: time.Hour, Renew: 30 * time.Minute, Rebind: 52*time.Minute + 30*time.Second, Acquired: at,
		Obtained: ObtainedDiscover}
	if !reflect.DeepEqual(l, want) {
		t.Errorf("lease\n got %+v\nwant %+v", l, want)
	}
	if l.Expires() != at.Add(time.Hour) {
		t.Errorf("expires %v", l.Expires())
	}
	s := x.sent
	if s.HostName() != "edge-1" || string(s.Options.Get(dhcpv4.OptionClientIdentifier)) != "cid" || s.ClassIdentifier() != "netagent" {
		t.Errorf("sent hostname %q client id %q vendor class %q", s.HostName(), s.Options.Get(dhcpv4.OptionClientIdentifier), s.ClassIdentifier())
	}
	if !s.ParameterRequestList().Has(dhcpv4.OptionClasslessStaticRoute) {
		t.Errorf("option 121 not requested: %v", s.ParameterRequestList())
	}
}

// Option 121 routes, and explicit T1/T2, are read.
func TestLeaseClasslessRoutes(t *testing.T) {
	_, dst, _ := net.ParseCIDR("198.51.100.0/24")
	_, def, _ := net.ParseCIDR("0.0.0.0/0")
	_, onlink, _ := net.ParseCIDR("203.0.113.0/25")
	m := ack(t, dhcpv4.WithOption(dhcpv4.OptClasslessStaticRoute(
		&dhcpv4.Route{Dest: def, Router: net.IPv4(192, 0, 2, 254)},
		&dhcpv4.Route{Dest: dst, Router: net.IPv4(192, 0, 2, 1)},
		&dhcpv4.Route{Dest: onlink, Router: net.IPv4zero})),
		dhcpv4.WithOption(dhcpv4.OptRenewTimeValue(10*time.Second)),
		dhcpv4.WithOption(dhcpv4.OptRebindingTimeValue(20*time.Second)))
	l, err := LeaseFromACK("eth0", m, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Route{
		{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: netip.MustParseAddr("192.0.2.254")},
		{Dst: netip.MustParsePrefix("198.51.100.0/24"), Via: netip.MustParseAddr("192.0.2.1")},
		{Dst: netip.MustParsePrefix("203.0.113.0/25")},
	}
	if !reflect.DeepEqual(l.Routes, want) || l.Renew != 10*time.Second || l.Rebind != 20*time.Second {
		t.Errorf("routes %v renew %v rebind %v", l.Routes, l.Renew, l.Rebind)
	}
}

// An ACK that cannot make a lease, and a failed exchange, are errors
// naming the interface.
func TestAcquireErrors(t *testing.T) {
	for _, tc := range []struct {
		x    *fakeExchanger
		want error
	}{
		{&fakeExchanger{ack: ack(t, dhcpv4.WithYourIP(net.IPv4zero))}, ErrNoAddress},
		{&fakeExchanger{ack: ack(t, dhcpv4.WithGeneric(dhcpv4.OptionIPAddressLeaseTime, nil))}, ErrNoLeaseTime},
		{&fakeExchanger{ack: ack(t, dhcpv4.WithNetmask(net.IPMask{255, 0, 255, 0}))}, ErrBadNetmask},
		{&fakeExchanger{err: context.DeadlineExceeded}, context.DeadlineExceeded},
	} {
		_, err := (&Client{X: tc.x}).Acquire(context.Background(), "eth0", Options{})
		if !errors.Is(err, tc.want) {
			t.Errorf("error %v, want %v", err, tc.want)
		}
	}
}

// A saved lease loads back equal; none saved is nil, not an error.
func TestLeaseStore(t *testing.T) {
	dir := t.TempDir()
	if l, err := LoadLease(dir, "eth0"); l != nil || err != nil {
		t.Fatalf("nothing saved: %v, %v", l, err)
	}
	l, err := LeaseFromACK("eth0", ack(t), time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if err := SaveLease(dir, l); err != nil {
		t.Fatal(err)
	}
	got, err := LoadLease(dir, "eth0")
	if err != nil || !reflect.DeepEqual(got, l) {
		t.Errorf("loaded %+v, %v; want %+v", got, err, l)
	}
}

// slowExchanger is fakeExchanger with the clock moving on while the
// server answers.
type slowExchanger struct {
	fakeExchanger
	clock *time.Time
}

func (s *slowExchanger) Request(ctx context.Context, ifname string, mods ...dhcpv4.Modifier) (*dhcpv4.DHCPv4, time.Time, error) {
	*s.clock = s.clock.Add(5 * time.Second)
	return s.fakeExchanger.Request(ctx, ifname, mods...)
}

func (s *slowExchanger) Send(ctx context.Context, ifname string, dest netip.Addr, mods ...dhcpv4.Modifier) (*dhcpv4.DHCPv4, error) {
	*s.clock = s.clock.Add(5 * time.Second)
	return s.fakeExchanger.Send(ctx, ifname, dest, mods...)
}

// A lease's times count from when the request went out, not from when the
// answer came (RFC 2131 4.4.1): a slow answer never stretches the lease
// beyond the server's.
func TestLeaseTimesCountFromTheRequest(t *testing.T) {
	at := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
	clock := at
	x := &slowExchanger{fakeExchanger: fakeExchanger{ack: ack(t)}, clock: &clock}
	c := &Client{X: x, Now: func() time.Time { return clock }}
	l, err := c.Acquire(context.Background(), "eth0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !l.Acquired.Equal(at) {
		t.Errorf("acquired at %v, want %v (the DISCOVER)", l.Acquired, at)
	}
	sent := clock
	r, err := c.Renew(context.Background(), l, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Acquired.Equal(sent) || r.Obtained != ObtainedRenew || x.dest != l.Server {
		t.Errorf("renewed: acquired %v (want %v), obtained %q, sent to %v", r.Acquired, sent, r.Obtained, x.dest)
	}
	if ciaddr := x.sent.ClientIPAddr.String(); ciaddr != "192.0.2.10" {
		t.Errorf("renewal ciaddr %s", ciaddr)
	}
}

// A lease acquired after minutes of a server away counts from the round
// of tries that got the ACK, not from the first DISCOVER: counted from
// there, a one-hour lease after a two-hour outage would arrive expired.
func TestAcquireCountsFromTheAnsweredRound(t *testing.T) {
	start := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	round := start.Add(2 * time.Hour)
	x := &fakeExchanger{ack: ack(t), began: round}
	l, err := (&Client{X: x, Now: func() time.Time { return start }}).Acquire(context.Background(), "eth0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !l.Acquired.Equal(round) || !l.ValidAt(round.Add(59*time.Minute)) {
		t.Errorf("acquired at %v, want the answered round's start %v", l.Acquired, round)
	}
}

// The ACK's search list (option 119) and domain name (option 15) are held
// to the DNS name grammar: a name with a newline (CVE-2018-1111's class)
// is dropped, named in Dropped, and the good one stays; an ACK whose
// address has prefix length 0 is ErrUnusable.
func TestLeaseFromACKChecks(t *testing.T) {
	evil := "a.example\nnameserver 6.6.6.6"
	m := ack(t, dhcpv4.WithOption(dhcpv4.OptDomainSearch(&rfc1035label.Labels{Labels: []string{evil, "lan.example"}})))
	l, err := LeaseFromACK("up0", m, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Domains) != 1 || l.Domains[0] != "lan.example" || len(l.Dropped) != 1 || !strings.Contains(l.Dropped[0], `"a.example\nnameserver`) {
		t.Errorf("option 119: domains %q dropped %q", l.Domains, l.Dropped)
	}
	l, err = LeaseFromACK("up0", ack(t, dhcpv4.WithOption(dhcpv4.OptDomainName(evil))), time.Now())
	if err != nil || len(l.Domains) != 0 || len(l.Dropped) != 1 {
		t.Errorf("option 15: %+v %v", l, err)
	}
	if _, err := LeaseFromACK("up0", ack(t, dhcpv4.WithNetmask(net.CIDRMask(0, 32))), time.Now()); !errors.Is(err, ErrUnusable) {
		t.Errorf("prefix length 0: %v, want ErrUnusable", err)
	}
}
