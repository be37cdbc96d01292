//go:build !vmtest

package netns_test

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/configurators/dns"
	"github.com/netagent/netagent/internal/dnsmasqtest"
	"github.com/netagent/netagent/internal/testns"
)

const dhcp6Intent = `{"version": 1,
  "interfaces": [{"name": "up0", "type": "physical", "ipv6": {"dhcp6": true}}],
  "dns": {"nameservers": ["192.0.2.53"], "search": ["corp.example"]}}`

// ipv6.dhcp6 against dnsmasq's DHCPv6 server: apply acquires the lease,
// puts its address on up0 and writes the resolv.conf it owns with the
// intent's server and domain first, then the lease's. A second apply
// changes nothing (the kept lease is read back, not asked for again),
// and check agrees.
func TestAgentCLIDHCP6AndDNS(t *testing.T) {
	e := raEnv(t, dnsmasqtest.Options{DHCP6: true, Domain: "lan.example"})
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	file := e.writeFile("dhcp6.json", dhcp6Intent)

	res := e.mustRun(0, "apply", "--resolv-conf", resolv, file)
	addrs := e.ip("-6", "addr", "show", "dev", "up0", "scope", "global")
	var leased netip.Addr
	for _, f := range strings.Fields(addrs) {
		if p, err := netip.ParsePrefix(f); err == nil && p.Bits() == 128 {
			leased = p.Addr()
		}
	}
	if !leased.IsValid() || leased.Less(dnsmasqtest.Range6First) || dnsmasqtest.Range6Last.Less(leased) {
		t.Fatalf("no leased /128 on up0 in the server's range:\n%s\n%s", addrs, res)
	}
	want := dns.Header + "\nnameserver 192.0.2.53\nnameserver " + dnsmasqtest.DNS6.String() + "\nsearch corp.example lan.example\n"
	if got, err := os.ReadFile(resolv); err != nil || string(got) != want {
		t.Fatalf("resolv.conf %q (%v), want %q", got, err, want)
	}

	if res := e.mustRun(0, "apply", "--resolv-conf", resolv, file); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply: %s", res)
	}
	e.mustRun(0, "check", "--resolv-conf", resolv, file)

	// Edited by hand but still with the header: drift, repaired.
	if err := os.WriteFile(resolv, []byte(dns.Header+"\nnameserver 203.0.113.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.mustRun(1, "check", "--resolv-conf", resolv, file)
	e.mustRun(0, "apply", "--resolv-conf", resolv, file)
	if got, _ := os.ReadFile(resolv); string(got) != want {
		t.Errorf("after the repair resolv.conf %q", got)
	}
}

// A resolv.conf someone else wrote is never overwritten: the apply fails
// on the dns item, naming the path, and the rest converges.
func TestAgentCLIDNSForeignResolvConf(t *testing.T) {
	e := cliNewEnv(t)
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	foreign := "# managed by someone else\nnameserver 9.9.9.9\n"
	if err := os.WriteFile(resolv, []byte(foreign), 0o644); err != nil {
		t.Fatal(err)
	}
	file := e.writeFile("dns.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]}],
  "dns": {"nameservers": ["192.0.2.53"]}}`)
	res := e.mustRun(1, "apply", "--resolv-conf", resolv, file)
	if !strings.Contains(res.stderr, resolv) || !strings.Contains(res.stderr, "not written by netagent") {
		t.Errorf("apply did not name the foreign file:\n%s", res)
	}
	if got, _ := os.ReadFile(resolv); string(got) != foreign {
		t.Errorf("foreign resolv.conf now %q", got)
	}
	if !strings.Contains(e.ip("addr", "show", "dev", "uplink0"), "192.0.2.10/24") {
		t.Error("the address did not converge beside the refused dns")
	}
	// Without --resolv-conf DNS is left alone, with a warning: the intent
	// applies.
	if res := e.mustRun(0, "apply", file); !strings.Contains(res.stderr, "the dns section is not applied") {
		t.Errorf("no warning that the dns section goes nowhere:\n%s", res)
	}
}

// Bad DNS and ipv6 input is refused with its JSON path, and nothing
// changes.
func TestAgentCLIDNSBadInput(t *testing.T) {
	e := cliNewEnv(t)
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	file := e.writeFile("bad.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "ipv6": {"acceptRADefRoute": false}}],
  "dns": {"nameservers": ["not-an-ip"], "search": ["bad domain"]}}`)
	res := e.netagent("apply", "--resolv-conf", resolv, file)
	for _, want := range []string{"interfaces[0].ipv6.acceptRADefRoute: needs acceptRA", `dns.nameservers[0]: "not-an-ip" is not an IP address`, `dns.search[0]: "bad domain" is not a domain name`} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("apply's errors lack %q:\n%s", want, res)
		}
	}
	if res.code == 0 {
		t.Errorf("bad input applied: %s", res)
	}
	if _, err := os.Stat(resolv); !os.IsNotExist(err) {
		t.Errorf("resolv.conf written from bad input: %v", err)
	}
	if res := e.netagent("apply", "--resolv-conf", "relative/resolv.conf", file); res.code == 0 || !strings.Contains(res.stderr, "absolute") {
		t.Errorf("a relative --resolv-conf: %s", res)
	}
}

// No DHCPv6 server answers: the lease item fails after its tries, naming
// the interface, and everything else converges (the lease blocks nothing
// that does not depend on it).
func TestAgentCLIDHCP6NoServer(t *testing.T) {
	e := cliNewEnv(t)
	file := e.writeFile("dhcp6.json", `{"version": 1, "interfaces": [
  {"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"], "ipv6": {"dhcp6": true}}]}`)
	res := e.mustRun(1, "apply", file)
	if !strings.Contains(res.stderr, "dhcp6-lease/uplink0") || !strings.Contains(res.stderr, "acquiring a DHCPv6 lease on uplink0") {
		t.Errorf("apply did not report the lease:\n%s", res)
	}
	if !strings.Contains(e.ip("addr", "show", "dev", "uplink0"), "192.0.2.10/24") {
		t.Error("the static address did not converge beside the lease")
	}
}

// dualIntent: up0 with dhcp4 and dhcp6, and a DNS server of its own.
const dualIntent = `{"version": 1,
  "interfaces": [{"name": "up0", "type": "physical", "dhcp4": true, "ipv6": {"dhcp6": true}}],
  "dns": {"nameservers": ["192.0.2.53"]}}`

// wantDualLeases checks what an apply of dualIntent against dnsmasq with
// DHCPv6 (res) left: resolv.conf with the intent's server, the DHCPv4
// lease's, then the DHCPv6 lease's, and both leases' addresses on up0.
// It returns the resolv.conf wanted.
func (e *cliEnv) wantDualLeases(resolv string, res cliResult) string {
	e.t.Helper()
	want := dns.Header + "\nnameserver 192.0.2.53\nnameserver " + dnsmasqtest.DNS.String() + "\nnameserver " + dnsmasqtest.DNS6.String() + "\nsearch lan.example\n"
	if got, err := os.ReadFile(resolv); err != nil || string(got) != want {
		e.t.Fatalf("resolv.conf %q (%v), want %q\n%s", got, err, want, res)
	}
	if out := e.ip("addr", "show", "dev", "up0"); !strings.Contains(out, "10.77.0.") || !strings.Contains(out, "2001:db8:77::") {
		e.t.Errorf("up0 lacks a lease's address:\n%s\n%s", out, res)
	}
	return want
}

// One uplink with dhcp4 and dhcp6 from one server: apply applies both
// leases' addresses, and the resolv.conf lists the intent's server, then
// the DHCPv4 lease's, then the DHCPv6 lease's; a second apply writes
// nothing but the DHCPv4 lease's confirmation.
func TestAgentCLIDHCP4And6DNS(t *testing.T) {
	e := raEnv(t, dnsmasqtest.Options{DHCP6: true, Domain: "lan.example"})
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	file := e.writeFile("dual.json", dualIntent)
	res := e.mustRun(0, "apply", "--resolv-conf", resolv, file)
	want := e.wantDualLeases(resolv, res)
	// Again: the DHCPv4 lease is confirmed (INIT-REBOOT, a modify of its
	// item), nothing else is written.
	res = e.mustRun(0, "apply", "--resolv-conf", resolv, file)
	for _, l := range strings.Split(res.stdout, "\n") {
		if f := strings.Fields(l); len(f) > 2 && strings.HasSuffix(f[0], ".") && !strings.HasPrefix(f[2], "dhcp4-lease/up0") {
			t.Errorf("second apply wrote %q:\n%s", l, res)
		}
	}
	if got, _ := os.ReadFile(resolv); string(got) != want {
		t.Errorf("resolv.conf after the second apply %q", got)
	}
}

// The DHCPv6 lease arrives in a later round of the apply: the server's
// namespace drops DHCPv6 until the first acquisition has failed (apply
// --wait 3s bounds it), while the DHCPv4 lease comes at once; the DHCPv4
// lease makes a second round, which asks again and gets the DHCPv6
// lease; what it gives (its address, its DNS server) is applied before
// apply says converged. (Before: exit 0, converged, resolv.conf without
// the DHCPv6 server and no DHCPv6 address on up0.) The test once made the
// first acquisition fail with a 12 s duplicate address detection; the
// client now waits for that (dhcp6.TestAcquireLongDAD).
func TestAgentCLIDHCP6LateLeaseApplied(t *testing.T) {
	t.Parallel()
	e, srv := raEnvServer(t, dnsmasqtest.Options{DHCP6: true, Domain: "lan.example"})
	drop := []string{"INPUT", "-p", "udp", "--dport", "547", "-j", "DROP"}
	testns.Exec(t, srv.Peer, "ip6tables", append([]string{"-I"}, drop...)...)
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	file := e.writeFile("dual.json", dualIntent)
	_, failed, wait := e.startSeeing("item=dhcp6-lease/up0 op=create outcome=failed", "apply", "--wait", "3s", "--resolv-conf", resolv, file)
	<-failed
	testns.Exec(t, srv.Peer, "ip6tables", append([]string{"-D"}, drop...)...)
	res := wait()
	if res.code != 0 || !strings.Contains(res.stdout, "create dhcp6-lease/up0: acquiring a DHCPv6 lease on up0") {
		t.Fatalf("want exit 0 after a first DHCPv6 acquisition that failed:\n%s", res)
	}
	e.wantDualLeases(resolv, res)
}

// The same with the DHCPv4 lease late: the server's namespace drops
// DHCPv4 until the first acquisition has failed (apply --wait 3s bounds
// it), while the DHCPv6 lease comes at once; the DHCPv6 lease makes a
// second round, which asks for the DHCPv4 lease again and gets it; its
// address, default route and DNS server are applied before apply says
// converged. (Before: exit 0, converged, resolv.conf without 10.77.0.53,
// no DHCPv4 address on up0.)
func TestAgentCLIDHCP4LateLeaseApplied(t *testing.T) {
	t.Parallel()
	e, srv := raEnvServer(t, dnsmasqtest.Options{DHCP6: true, Domain: "lan.example"})
	drop := []string{"INPUT", "-p", "udp", "--dport", "67", "-j", "DROP"}
	testns.Exec(t, srv.Peer, "iptables", append([]string{"-I"}, drop...)...)
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	file := e.writeFile("dual.json", dualIntent)
	_, failed, wait := e.startSeeing("item=dhcp4-lease/up0 op=create outcome=failed", "apply", "--wait", "3s", "--resolv-conf", resolv, file)
	<-failed
	testns.Exec(t, srv.Peer, "iptables", append([]string{"-D"}, drop...)...)
	res := wait()
	if res.code != 0 || !strings.Contains(res.stdout, "create dhcp4-lease/up0: dhcp4 lease on up0: no DHCPv4 server answered in time") {
		t.Fatalf("want exit 0 after a first DHCPv4 acquisition that failed:\n%s", res)
	}
	e.wantDualLeases(resolv, res)
	if !strings.Contains(e.ip("route", "show", "default"), "via 10.77.0.1 dev up0") {
		t.Errorf("no default route of the DHCPv4 lease:\n%s", res)
	}
}
