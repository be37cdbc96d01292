package lease4

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

func good() *Lease {
	return &Lease{Interface: "up0", Address: netip.MustParsePrefix("10.77.0.100/24"),
		Server: netip.MustParseAddr("10.77.0.1"), Router: netip.MustParseAddr("10.77.0.1"),
		DNS: []netip.Addr{netip.MustParseAddr("10.77.0.53")}, Domains: []string{"corp.example"},
		LeaseTime: time.Hour, Renew: 30 * time.Minute, Rebind: 52 * time.Minute}
}

// A lease whose address no host can take is refused whole (ErrUnusable,
// naming it): each of the addresses, and the other nonsense.
func TestCheckRefusesAddress(t *testing.T) {
	for _, addr := range []string{"10.77.0.100/0", "127.0.0.2/8", "224.0.0.5/24", "255.255.255.255/32",
		"0.0.0.0/24", "0.1.2.3/8", "169.254.1.1/16", "240.0.0.1/8", "10.77.0.0/24", "10.77.0.255/24"} {
		l := good()
		l.Address = netip.MustParsePrefix(addr)
		err := Check(l)
		if !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), l.Address.Addr().String()) {
			t.Errorf("%s: %v, want ErrUnusable naming the address", addr, err)
		}
	}
	for _, addr := range []string{"10.77.0.100/24", "192.0.2.7/32", "198.51.100.0/31", "100.64.0.9/10"} {
		l := good()
		l.Address = netip.MustParsePrefix(addr)
		if err := Check(l); err != nil {
			t.Errorf("%s: %v, want it accepted", addr, err)
		}
	}
}

// What else is not usable is dropped, each named in Dropped; what is
// usable stays, in order.
func TestCheckDrops(t *testing.T) {
	ip := netip.MustParseAddr
	for _, c := range []struct {
		name    string
		edit    func(*Lease)
		check   func(*Lease) bool
		dropped string
	}{
		{"router is the lease's own address", func(l *Lease) { l.Router = ip("10.77.0.100") },
			func(l *Lease) bool { return !l.Router.IsValid() }, "router 10.77.0.100: the lease's own address"},
		{"router is broadcast", func(l *Lease) { l.Router = ip("255.255.255.255") },
			func(l *Lease) bool { return !l.Router.IsValid() }, "router 255.255.255.255"},
		{"router is the subnet's broadcast", func(l *Lease) { l.Router = ip("10.77.0.255") },
			func(l *Lease) bool { return !l.Router.IsValid() }, "router 10.77.0.255"},
		{"bad DNS servers", func(l *Lease) {
			l.DNS = []netip.Addr{ip("0.0.0.0"), ip("255.255.255.255"), ip("224.0.0.251"), ip("127.0.0.53"), ip("10.77.0.53"), ip("10.77.0.53"), ip("9.9.9.9")}
		}, func(l *Lease) bool { return slices.Equal(l.DNS, []netip.Addr{ip("10.77.0.53"), ip("9.9.9.9")}) }, "DNS server 224.0.0.251: not a unicast address"},
		{"too many DNS servers", func(l *Lease) {
			l.DNS = []netip.Addr{ip("9.9.9.1"), ip("9.9.9.2"), ip("9.9.9.3"), ip("9.9.9.4")}
		}, func(l *Lease) bool { return len(l.DNS) == 3 }, "DNS server 9.9.9.4: more than 3"},
		{"a domain with a newline", func(l *Lease) { l.Domains = []string{"a.example\nnameserver 6.6.6.6", "b.example", "B.example."} },
			func(l *Lease) bool { return slices.Equal(l.Domains, []string{"b.example"}) }, `search domain "a.example\nnameserver 6.6.6.6": not a DNS name`},
		{"a label of 64 bytes", func(l *Lease) { l.Domains = []string{strings.Repeat("a", 64) + ".example"} },
			func(l *Lease) bool { return len(l.Domains) == 0 }, "not a DNS name"},
		{"bad routes", func(l *Lease) {
			l.Routes = []Route{{Dst: netip.MustParsePrefix("224.0.0.0/4"), Via: ip("10.77.0.1")},
				{Dst: netip.MustParsePrefix("127.0.0.0/8")},
				{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: ip("10.77.0.100")},
				{Dst: netip.MustParsePrefix("198.51.100.0/24"), Via: ip("10.77.0.1")},
				{Dst: netip.MustParsePrefix("198.51.100.0/24"), Via: ip("10.77.0.2")},
				{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: ip("10.77.0.1")}}
		}, func(l *Lease) bool {
			return slices.Equal(l.Routes, []Route{{Dst: netip.MustParsePrefix("198.51.100.0/24"), Via: ip("10.77.0.1")},
				{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: ip("10.77.0.1")}})
		}, "route 0.0.0.0/0 via 10.77.0.100: gateway the lease's own address"},
		{"bad server identifier", func(l *Lease) { l.Server = ip("0.0.0.0") },
			func(l *Lease) bool { return !l.Server.IsValid() }, "server identifier 0.0.0.0"},
	} {
		l := good()
		c.edit(l)
		if err := Check(l); err != nil {
			t.Errorf("%s: %v, want the lease kept", c.name, err)
			continue
		}
		if !c.check(l) || !slices.ContainsFunc(l.Dropped, func(d string) bool { return strings.Contains(d, c.dropped) }) {
			t.Errorf("%s: lease %+v dropped %q, want %q", c.name, l, l.Dropped, c.dropped)
		}
	}
	l := good()
	if err := Check(l); err != nil || len(l.Dropped) != 0 || !l.SameBinding(good()) {
		t.Errorf("a good lease: %v, dropped %q", err, l.Dropped)
	}
}

// The times are clamped so that MinRenew <= T1 < T2 < lease and the
// lease is at least MinLeaseTime: a T1 of 0 made the daemon renew in a
// loop.
func TestCheckTimes(t *testing.T) {
	const s = time.Second
	for _, c := range []struct{ lease, renew, rebind, wantLease, wantRenew, wantRebind time.Duration }{
		{3600 * s, 0, 0, 3600 * s, 1800 * s, 3150 * s},
		{3600 * s, 0, 3000 * s, 3600 * s, 1800 * s, 3000 * s},
		{3600 * s, 1000 * s, 3000 * s, 3600 * s, 1000 * s, 3000 * s},
		{3600 * s, 3000 * s, 1000 * s, 3600 * s, 1800 * s, 3150 * s}, // T1 after T2
		{3600 * s, 1000 * s, 3600 * s, 3600 * s, 1000 * s, 3150 * s}, // T2 at the end
		{3600 * s, 4000 * s, 5000 * s, 3600 * s, 1800 * s, 3150 * s},
		{1 * s, 0, 0, 60 * s, 30 * s, 52500 * time.Millisecond}, // a 1 s lease
		{10 * s, 5 * s, 8750 * time.Millisecond, 60 * s, 30 * s, 52500 * time.Millisecond},
		{3600 * s, 1 * s, 2 * s, 3600 * s, 1800 * s, 3150 * s}, // T1 under MinRenew
	} {
		l := good()
		l.LeaseTime, l.Renew, l.Rebind = c.lease, c.renew, c.rebind
		if err := Check(l); err != nil {
			t.Fatal(err)
		}
		if l.LeaseTime != c.wantLease || l.Renew != c.wantRenew || l.Rebind != c.wantRebind {
			t.Errorf("lease %v T1 %v T2 %v: got %v %v %v, want %v %v %v", c.lease, c.renew, c.rebind,
				l.LeaseTime, l.Renew, l.Rebind, c.wantLease, c.wantRenew, c.wantRebind)
		}
		if !(MinRenew <= l.Renew && l.Renew < l.Rebind && l.Rebind < l.LeaseTime) {
			t.Errorf("lease %v T1 %v T2 %v: clamped to %v %v %v, not MinRenew <= T1 < T2 < lease", c.lease, c.renew, c.rebind, l.LeaseTime, l.Renew, l.Rebind)
		}
	}
}
