//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/status"
	"github.com/netagent/netagent/internal/dnsmasqtest"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/items/lease4"
)

// daemonDHCPFile: up0 from DHCP, a static route through the DHCP gateway,
// and the static uplink0 (the env's) beside it.
const daemonDHCPFile = `{"version": 1,
  "interfaces": [
    {"name": "up0", "type": "physical", "dhcp4": {"hostname": "edge-1", "routeMetric": 100}},
    {"name": "uplink0", "type": "physical", "addresses": ["192.0.2.2/24"]}],
  "routes": [{"to": "203.0.113.0/24", "via": "10.77.0.1", "dev": "up0"}]}`

// daemonLeaseWait bounds the waits for a lease's own times (dnsmasq's
// shortest lease is two minutes).
const daemonLeaseWait = 4 * time.Minute

// TestAgentDaemonDHCP4 runs the daemon against dnsmasq through a lease's
// life: acquired (the static uplink0 converging meanwhile, not after),
// renewed at T1, kept across a restart (INIT-REBOOT: a REQUEST, no
// DISCOVER, nothing withdrawn), withdrawn with the carrier and
// re-acquired with it, and, the server gone, rebound at T2 in vain, then
// expired (address and routes withdrawn) and acquired again when the
// server is back; released when dhcp4 leaves the intent.
func TestAgentDaemonDHCP4(t *testing.T) {
	e := daemonNewEnv(t)
	srv := dnsmasqtest.Start(t, e.tgt, "up0", dnsmasqtest.Options{Renew: lease4.MinRenew, Rebind: 20 * time.Second})
	e.writeIntent("dhcp.json", daemonDHCPFile)
	e.start()
	addr := e.waitForLease("the first lease", "")
	if !e.hasAddress("192.0.2.2/24") {
		t.Error("the static uplink0 has no address")
	}
	ops := e.logs.entries(map[string]string{"msg": "kernel operation"})
	static, leased := -1, -1
	for i, op := range ops {
		if op["item"] == "address/uplink0/192.0.2.2/24" && static < 0 {
			static = i
		}
		if op["item"] == "dhcp4-lease/up0" && op["outcome"] == "ok" && leased < 0 {
			leased = i
		}
	}
	if static < 0 || leased < 0 || static > leased {
		t.Errorf("the static address (op %d) was not made before the lease came (op %d)", static, leased)
	}
	r, ok := e.route("203.0.113.0/24")
	if !ok || r.Gateway != "10.77.0.1" {
		t.Errorf("the static route through the DHCP gateway: %+v %v", r, ok)
	}

	// Renewal at T1 (lease4.MinRenew, the shortest T1 taken: 10 s).
	e.waitForLog("a renewal", map[string]string{"msg": "dhcp4: lease renewed"}, daemonWait)
	e.waitFor("the address's lifetime refreshed to the renewed lease's end", func() (bool, string) {
		st, err := e.status()
		if err != nil || len(st.Leases) != 1 || st.Leases[0].Obtained != "renew" {
			return false, fmt.Sprintf("%+v %v", st.Leases, err)
		}
		left, valid := time.Until(st.Leases[0].Expires).Seconds(), e.validLft(addr)
		return valid > 0 && math.Abs(left-float64(valid)) < 3, fmt.Sprintf("valid_lft %d, lease ends in %.0f s", valid, left)
	})

	// Restart: the kept lease is asked for again, nothing withdrawn.
	discovers := strings.Count(srv.Log(), "DHCPDISCOVER")
	e.stop()
	e.logs = &daemonLog{}
	e.start()
	if got := e.waitForLease("the lease after a restart", "reboot"); got != addr {
		t.Errorf("address %s after the restart, want %s", got, addr)
	}
	if n := strings.Count(srv.Log(), "DHCPDISCOVER"); n != discovers {
		t.Errorf("the restarted daemon sent a DISCOVER, not an INIT-REBOOT REQUEST")
	}
	for _, op := range e.logs.entries(map[string]string{"msg": "kernel operation", "op": "delete"}) {
		t.Errorf("the restart withdrew %v", op["item"])
	}

	// Carrier loss: the lease's address and routes go; back with it.
	testns.Exec(t, srv.Peer, "ip", "link", "set", srv.Link, "down")
	e.waitFor("the lease withdrawn with the carrier", func() (bool, string) {
		st, err := e.status()
		_, hasDefault := e.route("default")
		return err == nil && len(st.Leases) == 0 && !e.upHas(addr) && !hasDefault, fmt.Sprintf("%+v %v", st.Leases, err)
	})
	testns.Exec(t, srv.Peer, "ip", "link", "set", srv.Link, "up")
	if got := e.waitForLease("the lease after the carrier's return", "reboot"); got != addr {
		t.Errorf("address %s after the carrier's return, want %s", got, addr)
	}

	// The server gone: the renewals and the rebinding go unanswered, the
	// lease expires (two minutes), its address and routes are withdrawn.
	srv.Stop()
	e.waitForLog("a rebinding", map[string]string{"msg": "dhcp4: extending the lease", "state": "rebind"}, daemonLeaseWait)
	e.waitForLog("the expiry", map[string]string{"msg": "dhcp4: lease expired"}, daemonLeaseWait)
	e.waitFor("the address and routes withdrawn", func() (bool, string) {
		_, hasDefault := e.route("default")
		_, hasStatic := e.route("203.0.113.0/24")
		return !e.upHas(addr) && !hasDefault && !hasStatic, e.ip("-4", "addr")
	})
	if !e.hasAddress("192.0.2.2/24") {
		t.Error("the static uplink0 lost its address with the lease")
	}
	srv.Restart(t)
	e.waitForLease("a lease from the server back", "")
	st, _ := e.status()
	if len(st.Leases) != 1 || st.Leases[0].Gateway != "10.77.0.1" || len(st.Leases[0].DNS) != 1 {
		t.Errorf("status leases %+v", st.Leases)
	}

	// dhcp4 leaves the intent: the lease is released, its address goes.
	last := e.waitForLease("the lease before dhcp4 goes", "")
	e.writeIntent("dhcp.json", strings.Replace(daemonDHCPFile, `"dhcp4": {"hostname": "edge-1", "routeMetric": 100}`, `"addresses": []`, 1))
	e.waitFor("the lease released", func() (bool, string) {
		return strings.Contains(srv.Log(), "DHCPRELEASE(dhcpsrv0) "+strings.Split(last, "/")[0]) && !e.upHas(last), srv.Log()
	})
}

// waitForLease waits for a lease held on up0 (obtained so, if given)
// with its address and default route in the kernel, and returns the
// address.
func (e *daemonEnv) waitForLease(what, obtained string) string {
	e.t.Helper()
	var l status.LeaseStatus
	e.waitFor(what, func() (bool, string) {
		st, err := e.status()
		if err != nil || len(st.Leases) != 1 || !st.Leases[0].Held {
			return false, fmt.Sprintf("%+v %v", st.Leases, err)
		}
		l = st.Leases[0]
		def, ok := e.route("default")
		return (obtained == "" || l.Obtained == obtained) && e.upHas(l.Address) && ok && def.Gateway == "10.77.0.1",
			fmt.Sprintf("lease %+v, default route %+v", l, def)
	})
	return l.Address
}

// validLft returns the valid lifetime left of cidr on up0 in seconds
// (-1: forever or absent).
func (e *daemonEnv) validLft(cidr string) int {
	var links []struct {
		AddrInfo []struct {
			Local     string `json:"local"`
			PrefixLen int    `json:"prefixlen"`
			Valid     uint32 `json:"valid_life_time"`
		} `json:"addr_info"`
	}
	if err := json.Unmarshal([]byte(e.ip("-j", "addr", "show", "dev", "up0")), &links); err != nil {
		e.t.Fatal(err)
	}
	for _, l := range links {
		for _, a := range l.AddrInfo {
			if fmt.Sprintf("%s/%d", a.Local, a.PrefixLen) == cidr && a.Valid != 4294967295 {
				return int(a.Valid)
			}
		}
	}
	return -1
}

// upHas reports whether up0 holds cidr.
func (e *daemonEnv) upHas(cidr string) bool {
	return strings.Contains(e.ip("-4", "addr", "show", "dev", "up0"), "inet "+cidr+" ")
}

// waitForLog waits up to d for a log line with the fields of match.
func (e *daemonEnv) waitForLog(what string, match map[string]string, d time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(d)
	for len(e.logs.entries(match)) == 0 {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s\n%s", what, e.logs.String())
		}
		select {
		case <-e.exited:
			e.t.Fatalf("the daemon exited while waiting for %s\n%s", what, e.logs.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
