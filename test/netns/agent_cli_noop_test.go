//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/internal/dnsmasqtest"
	"github.com/netagent/netagent/internal/testns"
)

// TestAgentCLIApplyDHCP4TwiceNoOp: a second apply of the same intent,
// with the kept lease still before its renewal time (T1), is a true no-op
// as the README promises: no operation, and no exchange with the server
// (dnsmasq logs no new DHCP message), resolv.conf (with the lease's DNS)
// included.
func TestAgentCLIApplyDHCP4TwiceNoOp(t *testing.T) {
	t.Parallel()
	e := cliNewEnv(t)
	srv := dnsmasqtest.Start(t, e.tgt, "up0", dnsmasqtest.Options{})
	file := e.writeFile("dhcp.json", cliDHCPIntent)
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	e.mustRun(0, "apply", "--wait", "1m", "--resolv-conf", resolv, file)
	addr := e.leasedAddr()
	before := srv.Log()

	res := e.mustRun(0, "apply", "--json", "--wait", "1m", "--resolv-conf", resolv, file)
	var doc applyLeaseJSON
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, res)
	}
	if len(doc.Operations) != 0 {
		t.Errorf("the second apply ran %d operations, want none: %s", len(doc.Operations), res.stdout)
	}
	if len(doc.Leases) != 1 || doc.Leases[0].Address != addr.String() {
		t.Errorf("leases %+v, want %v", doc.Leases, addr)
	}
	if after := srv.Log(); strings.Count(after, "DHCP") != strings.Count(before, "DHCP") {
		t.Errorf("the second apply talked to the server:\n%s", strings.TrimPrefix(after, before))
	}
	if got := e.leasedAddr(); got != addr {
		t.Errorf("address %v, want %v", got, addr)
	}
}

// TestAgentCLIResolvConfFollowsRemovals: resolv.conf loses the servers of
// a dns section removed from the intent, and of a lease released (dhcp4
// left the intent), and check agrees; before, apply left them in the file
// and check said ok.
func TestAgentCLIResolvConfFollowsRemovals(t *testing.T) {
	t.Parallel()
	e := cliNewEnv(t)
	dnsmasqtest.Start(t, e.tgt, "up0", dnsmasqtest.Options{})
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	read := func() string {
		data, err := os.ReadFile(resolv)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		return string(data)
	}
	withDNS := e.writeFile("dns.json", `{"version": 1, "interfaces": [{"name": "up0", "type": "physical", "dhcp4": true}],
	  "dns": {"nameservers": ["192.0.2.53"]}}`)
	e.mustRun(0, "apply", "--wait", "1m", "--resolv-conf", resolv, withDNS)
	if got := read(); !strings.Contains(got, "nameserver 192.0.2.53") || !strings.Contains(got, "nameserver 10.77.0.53") {
		t.Fatalf("resolv.conf without the intent's and the lease's servers:\n%s", got)
	}
	leaseOnly := e.writeFile("dns.json", `{"version": 1, "interfaces": [{"name": "up0", "type": "physical", "dhcp4": true}]}`)
	e.mustRun(0, "apply", "--wait", "1m", "--resolv-conf", resolv, leaseOnly)
	if got := read(); strings.Contains(got, "192.0.2.53") || !strings.Contains(got, "nameserver 10.77.0.53") {
		t.Errorf("after the dns section went, resolv.conf:\n%s", got)
	}
	none := e.writeFile("dns.json", `{"version": 1, "interfaces": [{"name": "up0", "type": "physical"}]}`)
	e.mustRun(0, "apply", "--wait", "1m", "--resolv-conf", resolv, none)
	if got := read(); strings.Contains(got, "nameserver") {
		t.Errorf("after the lease was released, resolv.conf:\n%s", got)
	}
	e.mustRun(0, "check", "--resolv-conf", resolv, none)
	if res := e.mustRun(0, "apply", "--json", "--resolv-conf", resolv, none); strings.Contains(res.stdout, `"op"`) {
		t.Errorf("a second apply without DNS ran operations: %s", res.stdout)
	}
}

// TestAgentCLIReleaseDHCP6: an apply whose intent no longer has
// ipv6.dhcp6 on up0 gives the lease back (dnsmasq logs the RELEASE),
// withdraws its address and forgets the kept lease (the state file);
// before, the one-shot apply read the kept lease back only for an
// interface with dhcp6, so nothing was released or forgotten.
func TestAgentCLIReleaseDHCP6(t *testing.T) {
	t.Parallel()
	e := &cliEnv{t: t, tgt: testns.New(t), bin: cliBinary(t), stateDir: t.TempDir()}
	e.exec("sysctl", "-qw", "net.ipv6.conf.default.accept_ra=0", "net.ipv6.conf.default.autoconf=0")
	srv := dnsmasqtest.Start(t, e.tgt, "up0", dnsmasqtest.Options{DHCP6: true})
	e.mustRun(0, "apply", e.writeFile("dhcp6.json", `{"version": 1,
	  "interfaces": [{"name": "up0", "type": "physical", "ipv6": {"dhcp6": true}}]}`))
	kept := filepath.Join(e.stateDir, "dhcp6-up0.json")
	if _, err := os.Stat(kept); err != nil {
		t.Fatalf("no kept DHCPv6 lease after the apply: %v", err)
	}
	static := e.writeFile("dhcp6.json", `{"version": 1, "interfaces": [{"name": "up0", "type": "physical"}]}`)
	res := e.mustRun(0, "apply", static)
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(srv.Log(), "DHCPRELEASE"); {
		if time.Now().After(deadline) {
			t.Fatalf("dnsmasq saw no DHCPv6 RELEASE:\n%s\n%s", srv.Log(), res)
		}
		time.Sleep(100 * time.Millisecond) // dnsmasq's log arrives through a pipe
	}
	if _, err := os.Stat(kept); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the kept DHCPv6 lease is still in the state directory: %v", err)
	}
	for _, f := range strings.Fields(e.ip("-6", "addr", "show", "dev", "up0", "scope", "global")) {
		if p, err := netip.ParsePrefix(f); err == nil && p.Bits() == 128 {
			t.Errorf("the leased address %v stayed on up0", p)
		}
	}
	e.mustRun(0, "check", static)
}
