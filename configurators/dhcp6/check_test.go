package dhcp6

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func good6() *Lease {
	return &Lease{Interface: "up0", Address: netip.MustParseAddr("2001:db8:77::100"),
		DNS: []netip.Addr{netip.MustParseAddr("2001:db8:77::53")}, Search: []string{"lan.example"},
		Preferred: 30 * time.Minute, Valid: time.Hour, Acquired: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
}

// An address no host can have refuses the lease; bad DNS servers and
// domains are dropped and named.
func TestCheck6(t *testing.T) {
	for _, a := range []string{"ff02::1", "::1", "fe80::5", "::", "::ffff:10.0.0.1"} {
		l := good6()
		l.Address = netip.MustParseAddr(a)
		if err := check(l); !errors.Is(err, ErrUnusable) {
			t.Errorf("%s: %v, want ErrUnusable", a, err)
		}
	}
	l := good6()
	l.DNS = []netip.Addr{netip.MustParseAddr("ff02::fb"), netip.MustParseAddr("::1"), netip.MustParseAddr("fe80::1"), netip.MustParseAddr("2001:db8:77::53")}
	l.Search = []string{"a.example\nnameserver 6.6.6.6", "lan.example"}
	if err := check(l); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l.DNS, []netip.Addr{netip.MustParseAddr("2001:db8:77::53")}) || !slices.Equal(l.Search, []string{"lan.example"}) || len(l.Dropped) != 4 {
		t.Errorf("DNS %v search %q dropped %q", l.DNS, l.Search, l.Dropped)
	}
}

// The lifetimes are clamped: preferred never longer than valid, valid at
// least a minute, and 10 s <= T1 < T2 < valid, so that no T1 (a second, a
// T1 after T2) makes the daemon renew in a loop.
func TestCheck6Times(t *testing.T) {
	const s = time.Second
	for _, c := range []struct{ pref, valid, t1, t2, wantPref, wantValid, wantT1, wantT2 time.Duration }{
		{1800 * s, 3600 * s, 0, 0, 1800 * s, 3600 * s, 900 * s, 1440 * s},
		{1800 * s, 3600 * s, 600 * s, 1200 * s, 1800 * s, 3600 * s, 600 * s, 1200 * s},
		{7200 * s, 3600 * s, 0, 0, 3600 * s, 3600 * s, 1800 * s, 2880 * s}, // preferred > valid
		{1800 * s, 3600 * s, 1 * s, 2 * s, 1800 * s, 3600 * s, 900 * s, 1440 * s},
		{1800 * s, 3600 * s, 1000 * s, 900 * s, 1800 * s, 3600 * s, 1000 * s, 1440 * s}, // T2 before T1
		{4 * s, 4 * s, 0, 0, 4 * s, 60 * s, 10 * s, 35 * s},
		{0, 3600 * s, 0, 0, 0, 3600 * s, 1800 * s, 2880 * s}, // deprecated at once
	} {
		l := good6()
		l.Preferred, l.Valid, l.T1, l.T2 = c.pref, c.valid, c.t1, c.t2
		if err := check(l); err != nil {
			t.Fatal(err)
		}
		if l.Preferred != c.wantPref || l.Valid != c.wantValid || l.T1 != c.wantT1 || l.T2 != c.wantT2 {
			t.Errorf("%v/%v T1 %v T2 %v: got %v/%v %v %v, want %v/%v %v %v", c.pref, c.valid, c.t1, c.t2,
				l.Preferred, l.Valid, l.T1, l.T2, c.wantPref, c.wantValid, c.wantT1, c.wantT2)
		}
		if !(l.Preferred <= l.Valid && 10*s <= l.T1 && l.T1 < l.T2 && l.T2 < l.Valid) {
			t.Errorf("%v/%v T1 %v T2 %v: clamped to %v/%v %v %v", c.pref, c.valid, c.t1, c.t2, l.Preferred, l.Valid, l.T1, l.T2)
		}
		if got := l.RenewAt().Sub(l.Acquired); got != l.T1 {
			t.Errorf("RenewAt %v after the acquisition, want T1 %v", got, l.T1)
		}
	}
}

// A lease planted in the state directory is held to the same rules: a
// multicast address, or another interface's lease, is not kept.
func TestLoadLeaseRefusesPlanted(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"dhcp6-up0.json": `{"interface": "up0", "address": "ff02::1", "valid": 3600000000000, "acquired": "2026-12-01T12:00:00Z"}`,
		"dhcp6-up1.json": `{"interface": "wan9", "address": "2001:db8::1", "valid": 3600000000000, "acquired": "2026-12-01T12:00:00Z"}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"up0", "up1"} {
		if l, err := LoadLease(dir, name); err == nil || l != nil {
			t.Errorf("%s: %+v, %v: want an error", name, l, err)
		} else if !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v does not name the interface", name, err)
		}
	}
}
