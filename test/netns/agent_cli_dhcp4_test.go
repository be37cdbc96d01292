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

	"github.com/netagent/netagent/configurators/dhcp"
	"github.com/netagent/netagent/internal/dnsmasqtest"
)

// cliDHCPIntent: the uplink up0 from DHCP, a static route through the
// DHCP gateway, and the static lan0 (uplink0 of the env) beside it.
const cliDHCPIntent = `{
  "version": 1,
  "interfaces": [
    {"name": "up0", "type": "physical", "dhcp4": {"hostname": "edge-1", "routeMetric": 100}},
    {"name": "uplink0", "type": "physical", "addresses": ["192.168.1.1/24"]}],
  "routes": [{"to": "203.0.113.0/24", "via": "10.77.0.1", "dev": "up0"}]
}`

type applyLeaseJSON struct {
	Converged  bool                        `json:"converged"`
	Operations []struct{ Op, Item string } `json:"operations"`
	Leases     []struct {
		Interface, Address, Server, Gateway, Obtained, Expires, Error string
		DNS                                                           []string
	} `json:"leases"`
}

// TestAgentCLIApplyDHCP4: the built binary acquires a lease from dnsmasq
// in one apply: the leased address, its default route (with the intent's
// metric) and the static route through the DHCP gateway are in the kernel,
// and the lease is reported (text and --json). A second apply after the
// lease's renewal time (T1: the kept lease is made a minute older; before
// T1 the apply asks nothing: TestAgentCLIApplyDHCP4TwiceNoOp) reuses the
// kept lease: a REQUEST
// (INIT-REBOOT) and no new DISCOVER, the same address, and no address or
// route removed meanwhile.
func TestAgentCLIApplyDHCP4(t *testing.T) {
	e := cliNewEnv(t)
	srv := dnsmasqtest.Start(t, e.tgt, "up0", dnsmasqtest.Options{})
	file := e.writeFile("dhcp.json", cliDHCPIntent)

	res := e.mustRun(0, "apply", "--wait", "1m", file)
	if !strings.Contains(res.stdout, "dhcp4 up0: 10.77.0.") || !strings.Contains(res.stdout, "(discover), gateway 10.77.0.1, DNS [10.77.0.53]") {
		t.Errorf("apply does not report the lease: %s", res)
	}
	addr := e.leasedAddr()
	routes := e.ip("-4", "route", "show", "dev", "up0")
	for _, want := range []string{"default via 10.77.0.1", "metric 100", "203.0.113.0/24 via 10.77.0.1"} {
		if !strings.Contains(routes, want) {
			t.Errorf("route %q missing:\n%s", want, routes)
		}
	}
	if !strings.Contains(e.ip("-4", "addr", "show", "dev", "uplink0"), "192.168.1.1/24") {
		t.Error("the static interface did not converge")
	}
	if strings.Contains(res.stdout, "failed") && !strings.Contains(res.stdout, "0 failed") {
		t.Errorf("an operation failed (the static route before the leased address?): %s", res)
	}
	if v := e.validLft(); v < 100 || v > 120 {
		t.Errorf("the leased address's valid_lft is %d s, want the two-minute lease's (the kernel drops it with the lease)", v)
	}
	discovers := strings.Count(srv.Log(), "DHCPDISCOVER")

	e.ageKeptLease("up0", 61*time.Second) // past T1 (1 min): the kept lease is asked for again
	res = e.mustRun(0, "apply", "--json", "--wait", "1m", file)
	var doc applyLeaseJSON
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, res)
	}
	if len(doc.Leases) != 1 || doc.Leases[0].Address != addr.String() || doc.Leases[0].Obtained != "reboot" ||
		doc.Leases[0].Gateway != "10.77.0.1" || len(doc.Leases[0].DNS) != 1 {
		t.Errorf("second apply's leases %+v, want %v by INIT-REBOOT", doc.Leases, addr)
	}
	if n := strings.Count(srv.Log(), "DHCPDISCOVER"); n != discovers {
		t.Errorf("the second apply sent a DISCOVER (%d, was %d):\n%s", n, discovers, srv.Log())
	}
	for _, op := range doc.Operations {
		if op.Op == "delete" || (op.Op == "create" && strings.HasPrefix(op.Item, "address/up0")) {
			t.Errorf("the second apply withdrew or re-added the leased address or routes: %s", res.stdout)
		}
	}
	if len(doc.Leases) == 1 {
		exp, _ := time.Parse(time.RFC3339, doc.Leases[0].Expires)
		if v, want := e.validLft(), int(time.Until(exp).Seconds()); v < want-3 || v > want+3 {
			t.Errorf("valid_lft %d s after the INIT-REBOOT, want it refreshed to the lease's end (%d s)", v, want)
		}
	}
	if got := e.leasedAddr(); got != addr {
		t.Errorf("address %v after the second apply, want %v", got, addr)
	}
	e.mustRun(0, "check", file)
	show := e.mustRun(0, "show")
	if !strings.Contains(show.stdout, "dhcp4 up0: "+addr.String()) {
		t.Errorf("show does not list the lease: %s", show)
	}
	show = e.mustRun(0, "show", "--json")
	if !strings.Contains(show.stdout, `"hostname": "edge-1"`) || strings.Contains(show.stdout, addr.Addr().String()+"/") {
		t.Errorf("show --json: want dhcp4 on up0 (its options) and not its leased address: %s", show)
	}
}

// TestAgentCLIApplyDHCP4NoServer: with no server answering, the lease is
// reported as not acquired within --wait (exit 1, its dependants
// blocked), while the static interface converges.
func TestAgentCLIApplyDHCP4NoServer(t *testing.T) {
	e := cliNewEnv(t)
	e.ip("link", "add", "up0", "type", "veth", "peer", "name", "up0-peer")
	e.ip("link", "set", "up0", "up")
	e.ip("link", "set", "up0-peer", "up")
	file := e.writeFile("dhcp.json", cliDHCPIntent)
	start := time.Now()
	res := e.mustRun(1, "apply", "--wait", "3s", file)
	if took := time.Since(start); took > time.Minute {
		t.Errorf("apply took %v with --wait 3s", took)
	}
	if !strings.Contains(res.stdout, "dhcp4 up0: no lease") || !strings.Contains(res.stderr, "no DHCPv4 server answered in time") {
		t.Errorf("no lease not reported: %s", res)
	}
	if !strings.Contains(res.stderr, "address/up0/dhcp4") {
		t.Errorf("the static route through the DHCP gateway is not blocked on the lease: %s", res)
	}
	if !strings.Contains(e.ip("-4", "addr", "show", "dev", "uplink0"), "192.168.1.1/24") {
		t.Error("the static interface waited for the lease")
	}
}

// ageKeptLease moves the lease the state directory keeps for ifname by
// d into the past, as if acquired d earlier.
func (e *cliEnv) ageKeptLease(ifname string, d time.Duration) {
	e.t.Helper()
	l, err := dhcp.LoadLease(e.stateDir, ifname)
	if err != nil || l == nil {
		e.t.Fatalf("no kept lease of %s: %v", ifname, err)
	}
	l.Acquired = l.Acquired.Add(-d)
	if err := dhcp.SaveLease(e.stateDir, l); err != nil {
		e.t.Fatal(err)
	}
}

// validLft returns the valid lifetime left of up0's one IPv4 address, in
// seconds (-1: forever).
func (e *cliEnv) validLft() int {
	e.t.Helper()
	for _, l := range e.ipJSON("-4", "addr", "show", "dev", "up0") {
		for _, a := range l["addr_info"].([]any) {
			switch v := a.(map[string]any)["valid_life_time"].(type) {
			case float64:
				if v == 4294967295 {
					return -1
				}
				return int(v)
			default:
				return -1
			}
		}
	}
	e.t.Fatalf("no address on up0:\n%s", e.ip("addr"))
	return 0
}

// leasedAddr returns the one IPv4 address of up0.
func (e *cliEnv) leasedAddr() netip.Prefix {
	e.t.Helper()
	return e.leasedAddrOn("up0")
}

// leasedAddrOn is the IPv4 address on dev (`ip -j addr`), which must be in
// the DHCP server's subnet.
func (e *cliEnv) leasedAddrOn(dev string) netip.Prefix {
	e.t.Helper()
	for _, l := range e.ipJSON("-4", "addr", "show", "dev", dev) {
		for _, a := range l["addr_info"].([]any) {
			m := a.(map[string]any)
			p := netip.PrefixFrom(netip.MustParseAddr(m["local"].(string)), int(m["prefixlen"].(float64)))
			if !dnsmasqtest.ServerAddr.Masked().Contains(p.Addr()) {
				e.t.Fatalf("address %v outside the server's subnet", p)
			}
			return p
		}
	}
	e.t.Fatalf("no address on %s:\n%s", dev, e.ip("addr"))
	return netip.Prefix{}
}

// TestAgentCLITryDHCP4: a trial of a DHCP uplink applies the lease's
// address and routes too (the second round, with the lease), and its
// probe through the DHCP gateway passes before it confirms.
func TestAgentCLITryDHCP4(t *testing.T) {
	e := cliNewEnv(t)
	dnsmasqtest.Start(t, e.tgt, "up0", dnsmasqtest.Options{})
	file := e.writeFile("dhcp.json", cliDHCPIntent)
	res := e.mustRun(0, "try", "--timeout", "60s", "--confirm-when-probes-pass", "--probe", "ping:10.77.0.1", file)
	e.leasedAddr()
	if !strings.Contains(e.ip("-4", "route", "show", "dev", "up0"), "default via 10.77.0.1") {
		t.Errorf("no default route from the lease after the trial: %s", res)
	}
	e.mustRun(0, "check", file)
}

// TestAgentCLIRollbackDHCP4: rolling back to a version with a DHCP uplink
// brings the lease's address and routes back (the kept lease, asked for
// again), not only the lease item.
func TestAgentCLIRollbackDHCP4(t *testing.T) {
	e := cliNewEnv(t)
	dnsmasqtest.Start(t, e.tgt, "up0", dnsmasqtest.Options{})
	e.mustRun(0, "apply", e.writeFile("dhcp.json", cliDHCPIntent))
	addr := e.leasedAddr()
	e.mustRun(0, "apply", e.writeFile("static.json", `{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.168.1.1/24"]}]}`))
	if strings.Contains(e.ip("-4", "addr", "show", "dev", "up0"), "inet ") {
		t.Fatal("the leased address stayed without dhcp4")
	}
	res := e.mustRun(0, "rollback", "1")
	if got := e.leasedAddr(); got != addr {
		t.Errorf("address %v after the rollback, want %v: %s", got, addr, res)
	}
	if !strings.Contains(e.ip("-4", "route", "show", "dev", "up0"), "default via 10.77.0.1") {
		t.Errorf("no default route after the rollback: %s", res)
	}
}

// TestAgentCLIReleaseDHCP4: an apply whose intent no longer has dhcp4 on
// up0 gives the lease back (DHCPRELEASE: dnsmasq logs it and drops it
// from its lease file), withdraws the address and routes, and forgets the
// kept lease (the state directory's file), while the carrier is up.
func TestAgentCLIReleaseDHCP4(t *testing.T) {
	e := cliNewEnv(t)
	srv := dnsmasqtest.Start(t, e.tgt, "up0", dnsmasqtest.Options{})
	e.mustRun(0, "apply", "--wait", "1m", e.writeFile("dhcp.json", cliDHCPIntent))
	addr := e.leasedAddr()
	kept := filepath.Join(e.stateDir, "dhcp4-up0.json")
	if _, err := os.Stat(kept); err != nil {
		t.Fatalf("no kept lease after the apply: %v", err)
	}

	static := `{"version": 1, "interfaces": [{"name": "up0", "type": "physical"},
	  {"name": "uplink0", "type": "physical", "addresses": ["192.168.1.1/24"]}]}`
	res := e.mustRun(0, "apply", "--wait", "1m", e.writeFile("static.json", static))
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(srv.Log(), "DHCPRELEASE(dhcpsrv0) "+addr.Addr().String()); {
		if time.Now().After(deadline) {
			t.Fatalf("dnsmasq saw no DHCPRELEASE of %v:\n%s\n%s", addr, srv.Log(), res)
		}
		time.Sleep(100 * time.Millisecond) // dnsmasq's log arrives through a pipe
	}
	if got := e.ip("-4", "addr", "show", "dev", "up0"); strings.Contains(got, "inet ") {
		t.Errorf("the leased address stayed:\n%s", got)
	}
	if got := e.ip("-4", "route", "show", "dev", "up0"); got != "" {
		t.Errorf("routes of the lease stayed:\n%s", got)
	}
	if _, err := os.Stat(kept); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the kept lease is still in the state directory: %v", err)
	}
	for _, l := range srv.Leases(t) {
		if strings.Contains(l, " "+addr.Addr().String()+" ") {
			t.Errorf("dnsmasq still holds the lease: %s", l)
		}
	}
	e.mustRun(0, "check", e.writeFile("static.json", static))
}
