//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/netagent/netagent/configurators/dns"
	"github.com/netagent/netagent/internal/dhcptest"
	"github.com/netagent/netagent/internal/dnsmasqtest"
	"github.com/netagent/netagent/internal/testns"
)

// A DHCP server is not trusted (issue 22). These tests answer the client
// with a real server in a peer namespace (dnsmasq, or dhcptest for what
// dnsmasq will not send) and read the end result back from the kernel
// and the resolv.conf written.

const hostileIntent = `{"version": 1, "interfaces": [{"name": "up0", "type": "physical", "dhcp4": true}]}`

// inet4 returns up0's IPv4 addresses and routes, as `ip -j` has them.
func (e *cliEnv) inet4() (addrs, routes []string) {
	e.t.Helper()
	for _, l := range e.ipJSON("-4", "addr", "show", "dev", "up0") {
		for _, a := range l["addr_info"].([]any) {
			m := a.(map[string]any)
			addrs = append(addrs, m["local"].(string)+"/"+jsonNumber(m["prefixlen"]))
		}
	}
	for _, r := range e.ipJSON("-4", "route", "show", "table", "all", "dev", "up0") {
		s := r["dst"].(string)
		if gw, ok := r["gateway"].(string); ok {
			s += " via " + gw
		}
		routes = append(routes, s)
	}
	return addrs, routes
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Option 15 with newlines (the lines "nameserver 6.6.6.6" and "options
// ndots:15 trust-ad" of issue 22, CVE-2018-1111's class) and DNS servers
// 255.255.255.255, 224.0.0.251 and 127.0.0.1 from dnsmasq: the lease is
// taken, the domain and the servers are dropped (and said so), and the
// resolv.conf written holds the one good server and no line of the
// server's.
func TestAgentCLIDHCP4HostileDNS(t *testing.T) {
	e := cliNewEnv(t)
	dnsmasqtest.Start(t, e.tgt, "up0", dnsmasqtest.Options{DHCPOptions: []string{
		`15,"a.example\nnameserver 6.6.6.6\noptions ndots:15 trust-ad"`,
		"6,255.255.255.255,224.0.0.251,127.0.0.1," + dnsmasqtest.DNS.String()}})
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	res := e.mustRun(0, "apply", "--wait", "1m", "--resolv-conf", resolv, e.writeFile("up.json", hostileIntent))
	got, err := os.ReadFile(resolv)
	if want := dns.Header + "\nnameserver " + dnsmasqtest.DNS.String() + "\n"; err != nil || string(got) != want {
		t.Errorf("resolv.conf %q (%v), want %q\n%s", got, err, want, res)
	}
	for _, s := range []string{`search domain \"a.example\\nnameserver 6.6.6.6`, "DNS server 224.0.0.251: not a unicast address", "DNS server 127.0.0.1"} {
		if !strings.Contains(res.stdout+res.stderr, s) {
			t.Errorf("apply does not say %q was dropped:\n%s", s, res)
		}
	}
	if addrs, _ := e.inet4(); len(addrs) != 1 {
		t.Errorf("addresses %v, want the lease's", addrs)
	}
}

// An address no host can have (each of issue 22's) refuses the lease:
// apply fails naming it, and nothing of it reaches the kernel (no address,
// no route on up0).
func TestAgentCLIDHCP4UnusableAddress(t *testing.T) {
	for _, addr := range []string{"10.77.0.100/0", "127.0.0.2/8", "224.0.0.5/24", "255.255.255.255/32"} {
		t.Run(strings.ReplaceAll(addr, "/", "_"), func(t *testing.T) {
			t.Parallel()
			e := cliNewEnv(t)
			dhcptest.Start(t, e.tgt, "up0", dhcptest.Reply{Address: netip.MustParsePrefix(addr),
				Router: dhcptest.ServerAddr.Addr(), LeaseTime: 2 * time.Minute})
			res := e.mustRun(1, "apply", "--wait", "20s", e.writeFile("up.json", hostileIntent))
			if !strings.Contains(res.stderr, "unusable") || !strings.Contains(res.stderr, netip.MustParsePrefix(addr).Addr().String()) {
				t.Errorf("apply does not refuse the lease naming its address:\n%s", res)
			}
			if addrs, routes := e.inet4(); len(addrs) != 0 || len(routes) != 0 {
				t.Errorf("in the kernel: addresses %v, routes %v; want none", addrs, routes)
			}
		})
	}
}

// A router equal to the lease's own address, DNS servers 0.0.0.0,
// 255.255.255.255 and 224.0.0.251 and a renewal time of 0: the lease is
// taken without them (no default route via itself; the one good server
// in resolv.conf) and its T1 is the default half of the lease.
func TestAgentCLIDHCP4NonsenseValues(t *testing.T) {
	t.Parallel()
	e := cliNewEnv(t)
	ip := netip.MustParseAddr
	dhcptest.Start(t, e.tgt, "up0", dhcptest.Reply{Address: netip.MustParsePrefix("10.77.0.100/24"), Router: ip("10.77.0.100"),
		DNS: []netip.Addr{ip("0.0.0.0"), ip("255.255.255.255"), ip("224.0.0.251"), ip("10.77.0.53")}, LeaseTime: 2 * time.Minute,
		Options: []dhcpv4.Option{dhcpv4.OptRenewTimeValue(0)}})
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	res := e.mustRun(0, "apply", "--json", "--wait", "20s", "--resolv-conf", resolv, e.writeFile("up.json", hostileIntent))
	addrs, routes := e.inet4()
	if len(addrs) != 1 || addrs[0] != "10.77.0.100/24" {
		t.Errorf("addresses %v, want 10.77.0.100/24", addrs)
	}
	for _, r := range routes {
		if strings.Contains(r, " via ") {
			t.Errorf("route %q: a route through the lease's own address", r)
		}
	}
	if got, _ := os.ReadFile(resolv); string(got) != dns.Header+"\nnameserver 10.77.0.53\n" {
		t.Errorf("resolv.conf %q", got)
	}
	var doc struct {
		Leases []struct {
			Acquired, RenewAt string
			Dropped           []string
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil || len(doc.Leases) != 1 {
		t.Fatalf("--json: %v\n%s", err, res)
	}
	acq, _ := time.Parse(time.RFC3339, doc.Leases[0].Acquired)
	renew, _ := time.Parse(time.RFC3339, doc.Leases[0].RenewAt)
	if d := renew.Sub(acq); d < 59*time.Second || d > 61*time.Second {
		t.Errorf("renewal %v after the acquisition, want the default half of the 2 min lease", d)
	}
	if !strings.Contains(strings.Join(doc.Leases[0].Dropped, "\n"), "router 10.77.0.100: the lease's own address") {
		t.Errorf("dropped %q does not name the router", doc.Leases[0].Dropped)
	}
}

// A renewal time of 0 made the daemon send thousands of REQUESTs in ten
// seconds (issue 22): now it renews at half the lease, and a server that
// NAKs every REQUEST is asked at a pace that backs off.
func TestAgentDaemonDHCP4NoStorm(t *testing.T) {
	e := daemonNewEnv(t)
	srv := dhcptest.Start(t, e.tgt, "up0", dhcptest.Reply{Address: netip.MustParsePrefix("10.77.0.100/24"),
		Router: dhcptest.ServerAddr.Addr(), LeaseTime: 2 * time.Minute, Options: []dhcpv4.Option{dhcpv4.OptRenewTimeValue(0)}})
	e.writeIntent("dhcp.json", hostileIntent)
	e.start()
	e.waitForLease("the lease", "")
	time.Sleep(10 * time.Second)
	if n := srv.Count(dhcpv4.MessageTypeRequest); n > 2 {
		t.Errorf("%d REQUESTs in 10 s with T1 = 0, want the acquisition's only", n)
	}
	srv.Set(dhcptest.Reply{Address: netip.MustParsePrefix("10.77.0.100/24"), NAK: true})
	e.ip("link", "set", "up0", "down") // the lease goes with the carrier: the daemon asks again
	e.ip("link", "set", "up0", "up")
	start := srv.Count(dhcpv4.MessageTypeRequest) + srv.Count(dhcpv4.MessageTypeDiscover)
	time.Sleep(15 * time.Second)
	if n := srv.Count(dhcpv4.MessageTypeRequest) + srv.Count(dhcpv4.MessageTypeDiscover) - start; n > 16 {
		t.Errorf("%d messages in 15 s to a server that NAKs every REQUEST: no back-off", n)
	}
}

const hostile6Intent = `{"version": 1, "interfaces": [{"name": "up0", "type": "physical", "ipv6": {"dhcp6": true}}]}`

// addr6 returns up0's global IPv6 addresses with their lifetimes, as
// `ip -j` has them: "addr/len preferred valid".
func (e *cliEnv) addr6() []string {
	e.t.Helper()
	var out []string
	for _, l := range e.ipJSON("-6", "addr", "show", "dev", "up0", "scope", "global") {
		for _, a := range l["addr_info"].([]any) {
			m := a.(map[string]any)
			if _, ok := m["local"].(string); !ok {
				continue // the other addresses, filtered out
			}
			out = append(out, m["local"].(string)+"/"+jsonNumber(m["prefixlen"])+" "+jsonNumber(m["preferred_life_time"])+" "+jsonNumber(m["valid_life_time"]))
		}
	}
	return out
}

// A DHCPv6 lease's address gets each lifetime as the server gave it (it
// had the valid one as its preferred one too); its DNS servers that are
// not global unicast and its search domain with a newline are dropped,
// and the resolv.conf holds only the rest.
func TestAgentCLIDHCP6LifetimesAndDNS(t *testing.T) {
	t.Parallel()
	e := cliNewEnv(t)
	ip := netip.MustParseAddr
	dhcptest.Start6(t, e.tgt, "up0", dhcptest.Reply6{Address: ip("2001:db8:77::100"), Preferred: 300 * time.Second, Valid: 600 * time.Second,
		DNS: []netip.Addr{ip("ff02::1"), ip("::1"), ip("2001:db8:77::53")}, Search: []string{"a.example\nnameserver 6.6.6.6", "lan.example"}})
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	res := e.mustRun(0, "apply", "--resolv-conf", resolv, e.writeFile("up.json", hostile6Intent))
	addrs := e.addr6()
	var pref, valid int
	if len(addrs) != 1 || !strings.HasPrefix(addrs[0], "2001:db8:77::100/128 ") {
		t.Fatalf("global addresses %v, want the lease's\n%s", addrs, res)
	}
	fmt.Sscanf(strings.TrimPrefix(addrs[0], "2001:db8:77::100/128 "), "%d %d", &pref, &valid)
	if pref < 290 || pref > 300 || valid < 590 || valid > 600 {
		t.Errorf("preferred_lft %d, valid_lft %d: want the server's 300 and 600", pref, valid)
	}
	want := dns.Header + "\nnameserver 2001:db8:77::53\nsearch lan.example\n"
	if got, _ := os.ReadFile(resolv); string(got) != want {
		t.Errorf("resolv.conf %q, want %q", got, want)
	}
}

// A DHCPv6 address that is multicast, loopback, link-local or
// unspecified refuses the lease: apply fails naming it, and no address
// reaches up0.
func TestAgentCLIDHCP6UnusableAddress(t *testing.T) {
	for _, addr := range []string{"ff02::1", "::1", "fe80::5", "::"} {
		t.Run(strings.ReplaceAll(addr, ":", "_"), func(t *testing.T) {
			t.Parallel()
			e := cliNewEnv(t)
			dhcptest.Start6(t, e.tgt, "up0", dhcptest.Reply6{Address: netip.MustParseAddr(addr), Preferred: time.Hour, Valid: time.Hour})
			res := e.mustRun(1, "apply", e.writeFile("up.json", hostile6Intent))
			if !strings.Contains(res.stderr, "unusable") && !strings.Contains(res.stderr, "gives no address") {
				t.Errorf("apply does not refuse the lease:\n%s", res)
			}
			if a := e.ip("-6", "addr", "show", "dev", "up0"); len(e.addr6()) != 0 || strings.Contains(a, "fe80::5/") {
				t.Errorf("the server's address is on up0:\n%s", a)
			}
		})
	}
}

// A server that answers a renewal with an address no host can have does
// not take the lease away: the daemon keeps the good lease held (its
// address in the kernel, the bad one never), status says why the
// renewal failed, and the metric counts it as invalid; a first lease
// that is unusable fails the lease item and is counted too.
func TestAgentDaemonDHCP4UnusableRenewal(t *testing.T) {
	e := daemonNewEnv(t)
	good := dhcptest.Reply{Address: netip.MustParsePrefix("10.77.0.100/24"), Router: dhcptest.ServerAddr.Addr(), LeaseTime: 2 * time.Minute,
		Options: []dhcpv4.Option{dhcpv4.OptRenewTimeValue(10 * time.Second)}}
	srv := dhcptest.Start(t, e.tgt, "up0", good)
	e.writeIntent("dhcp.json", hostileIntent)
	e.start()
	e.waitForLease("the lease", "")
	bad := good
	bad.Address = netip.MustParsePrefix("127.0.0.2/8")
	srv.Set(bad)
	e.waitFor("the unusable renewal in status", func() (bool, string) {
		st, err := e.status()
		if err != nil || len(st.Leases) != 1 {
			return false, fmt.Sprintf("%+v %v", st.Leases, err)
		}
		l := st.Leases[0]
		return l.Held && l.Address == "10.77.0.100/24" && strings.Contains(l.LastError, "unusable") && strings.Contains(l.LastError, "127.0.0.2"),
			fmt.Sprintf("%+v", l)
	})
	if !e.upHas("10.77.0.100/24") || strings.Contains(e.ip("-4", "addr", "show", "dev", "up0"), "127.0.0.2") {
		t.Errorf("up0's addresses:\n%s", e.ip("-4", "addr", "show", "dev", "up0"))
	}
	metric := `netagent_dhcp4_lease_events_total{event="invalid",interface="up0"}`
	renewals := e.scrapeSocket()[metric]
	if renewals < 1 {
		t.Errorf("lease events invalid: %v, want at least 1", renewals)
	}

	// The carrier goes and comes back: the lease is let go, and the
	// server's answers to the new acquisition are unusable.
	testns.Exec(t, srv.Peer, "ip", "link", "set", srv.Link, "down")
	e.waitFor("the lease withdrawn with the carrier", func() (bool, string) {
		st, err := e.status()
		return err == nil && len(st.Leases) == 0, fmt.Sprintf("%+v %v", st.Leases, err)
	})
	testns.Exec(t, srv.Peer, "ip", "link", "set", srv.Link, "up")
	e.waitFor("the lease item failing on the unusable lease", func() (bool, string) {
		st, err := e.status()
		if err != nil {
			return false, err.Error()
		}
		it, ok := daemonItem(st, "dhcp4-lease/up0")
		return ok && it.State == "failed" && strings.Contains(it.LastError, "unusable"), fmt.Sprintf("%+v", it)
	})
	if v := e.scrapeSocket()[metric]; v <= renewals {
		t.Errorf("lease events invalid: %v after the refused acquisition, was %v", v, renewals)
	}
	if a := e.ip("-4", "addr", "show", "dev", "up0"); strings.Contains(a, "127.0.0.2") {
		t.Errorf("the unusable address is on up0:\n%s", a)
	}
}
