//go:build !vmtest

package netns_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/internal/dnsmasqtest"
	"github.com/netagent/netagent/internal/testns"
)

// daemonDHCP6File: up0's address from DHCPv6, the static uplink0 beside it.
const daemonDHCP6File = `{"version": 1,
  "interfaces": [
    {"name": "up0", "type": "physical", "ipv6": {"dhcp6": true}},
    {"name": "uplink0", "type": "physical", "addresses": ["192.0.2.2/24"]}]}`

// TestAgentDaemonDHCP6 runs the daemon against dnsmasq's DHCPv6 server
// through a lease's life: acquired while the daemon runs, its /128 in the
// kernel at once (it used to wait for the next change of the intent) with
// the lease's end as valid_lft; renewed at T1 (dnsmasq: half the two
// minutes), which moves valid_lft; kept across a restart (no new
// SOLICIT, nothing withdrawn); withdrawn with the carrier and acquired
// again with it; released when ipv6.dhcp6 leaves the intent. The expiry
// with the server gone is TestLease6AcquiredRenewedExpired's (agent).
func TestAgentDaemonDHCP6(t *testing.T) {
	e := daemonNewEnv(t)
	e.exec("sysctl", "-qw", "net.ipv6.conf.default.accept_ra=0", "net.ipv6.conf.default.autoconf=0")
	srv := dnsmasqtest.Start(t, e.tgt, "up0", dnsmasqtest.Options{DHCP6: true, Domain: "lan.example"})
	e.writeIntent("dhcp6.json", daemonDHCP6File)
	e.start()
	l := e.waitForLease6("the first lease", func(status.LeaseStatus) bool { return true })
	if !e.hasAddress("192.0.2.2/24") {
		t.Error("the static uplink0 has no address")
	}
	if len(l.DNS) != 1 || l.DNS[0] != dnsmasqtest.DNS6.String() || len(l.Domains) != 1 || l.Domains[0] != "lan.example" {
		t.Errorf("lease %+v, want the server's DNS and domain", l)
	}
	e.waitForLifetime6(l)

	// Renewal at T1 (60 s): the address's lifetime follows.
	e.waitForLog("a renewal", map[string]string{"msg": "dhcp6: lease renewed"}, daemonLeaseWait)
	renewed := e.waitForLease6("the renewed lease", func(r status.LeaseStatus) bool { return r.Acquired.After(l.Acquired) })
	if renewed.Address != l.Address {
		t.Errorf("renewed %s, want %s", renewed.Address, l.Address)
	}
	e.waitForLifetime6(renewed)
	if !strings.Contains(srv.Log(), "DHCPRENEW") {
		t.Errorf("dnsmasq saw no RENEW:\n%s", srv.Log())
	}

	// Restart: the kept lease is held, nothing withdrawn, nothing asked.
	solicits := strings.Count(srv.Log(), "DHCPSOLICIT")
	e.stop()
	e.logs = &daemonLog{}
	e.start()
	e.waitForLease6("the lease after a restart", func(r status.LeaseStatus) bool { return r.Address == l.Address })
	if n := strings.Count(srv.Log(), "DHCPSOLICIT"); n != solicits {
		t.Errorf("the restarted daemon sent a SOLICIT (%d, was %d)", n, solicits)
	}
	for _, op := range e.logs.entries(map[string]string{"msg": "kernel operation", "op": "delete"}) {
		t.Errorf("the restart withdrew %v", op["item"])
	}

	// Carrier loss: the address goes; it comes back with the carrier. (The
	// server's side keeps its IPv6 address while down, as a router would.)
	testns.Exec(t, srv.Peer, "sysctl", "-qw", "net.ipv6.conf."+srv.Link+".keep_addr_on_down=1")
	testns.Exec(t, srv.Peer, "ip", "link", "set", srv.Link, "down")
	e.waitFor("the lease withdrawn with the carrier", func() (bool, string) {
		st, err := e.status()
		return err == nil && len(st.Leases) == 0 && !e.upHas6(l.Address), fmt.Sprintf("%+v %v", st.Leases, err)
	})
	testns.Exec(t, srv.Peer, "ip", "link", "set", srv.Link, "up")
	back := e.waitForLease6("the lease after the carrier's return", func(status.LeaseStatus) bool { return true })

	// ipv6.dhcp6 leaves the intent: the lease is released, its address goes.
	e.writeIntent("dhcp6.json", strings.Replace(daemonDHCP6File, `"ipv6": {"dhcp6": true}`, `"addresses": []`, 1))
	e.waitFor("the lease released", func() (bool, string) {
		st, _ := e.status()
		return strings.Contains(srv.Log(), "DHCPRELEASE") && !e.upHas6(back.Address) && len(st.Leases) == 0, srv.Log()
	})
}

// waitForLease6 waits for a DHCPv6 lease held on up0 that ok accepts,
// with its address in the kernel, and returns it.
func (e *daemonEnv) waitForLease6(what string, ok func(status.LeaseStatus) bool) status.LeaseStatus {
	e.t.Helper()
	var l status.LeaseStatus
	e.waitFor(what, func() (bool, string) {
		st, err := e.status()
		if err != nil || len(st.Leases) != 1 || st.Leases[0].Family != "ipv6" || !st.Leases[0].Held {
			return false, fmt.Sprintf("%+v %v", st.Leases, err)
		}
		l = st.Leases[0]
		return ok(l) && e.upHas6(l.Address), fmt.Sprintf("lease %+v\n%s", l, e.ip("-6", "addr", "show", "dev", "up0"))
	})
	return l
}

// waitForLifetime6 waits until the valid_lft of l's address counts down
// to l's end.
func (e *daemonEnv) waitForLifetime6(l status.LeaseStatus) {
	e.t.Helper()
	e.waitFor("the address's valid_lft at the lease's end", func() (bool, string) {
		left, valid := time.Until(l.Expires).Seconds(), e.validLft(l.Address)
		return valid > 0 && math.Abs(left-float64(valid)) < 3, fmt.Sprintf("valid_lft %d, lease ends in %.0f s", valid, left)
	})
}

// upHas6 reports whether up0 holds cidr (an IPv6 address).
func (e *daemonEnv) upHas6(cidr string) bool {
	return strings.Contains(e.ip("-6", "addr", "show", "dev", "up0"), "inet6 "+cidr+" ")
}
