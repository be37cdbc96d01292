//go:build !vmtest

package netns_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/dnsmasqtest"
)

// TestAgentDaemonLeaseClaims: the daemon, given by dnsmasq an option-121
// route into the protected uplink0's subnet, keeps it out of the kernel
// (uplink0's subnet stays on uplink0), installs the rest of the lease,
// says why in status (leases[].refused) and logs it once.
func TestAgentDaemonLeaseClaims(t *testing.T) {
	t.Parallel()
	e := daemonNewEnv(t)
	dnsmasqtest.Start(t, e.tgt, "up0", dnsmasqtest.Options{Routes: []netip.Prefix{
		netip.MustParsePrefix("10.99.0.0/24"), netip.MustParsePrefix("0.0.0.0/0")}})
	e.writeIntent("dhcp.json", `{"version": 1, "interfaces": [
	  {"name": "up0", "type": "physical", "dhcp4": {"routeMetric": 100}},
	  {"name": "uplink0", "type": "physical", "protected": true, "addresses": ["10.99.0.1/24"]}]}`)
	e.startAnyway() // never ready: the lease is refused in part
	const why = "lease route to 10.99.0.0/24 would take traffic from uplink0's address 10.99.0.1/24"
	e.waitFor("the lease, its route into uplink0's subnet refused", func() (bool, string) {
		st, err := e.status()
		if err != nil || len(st.Leases) != 1 || !st.Leases[0].Held {
			return false, fmt.Sprintf("%+v %v", st.Leases, err)
		}
		def, ok := e.route("default")
		return strings.Contains(st.Leases[0].Refused, why) && ok && def.Gateway == "10.77.0.1", fmt.Sprintf("%+v", st.Leases)
	})
	if got := e.ip("-4", "route", "show", "10.99.0.0/24"); !strings.Contains(got, "dev uplink0") || strings.Contains(got, "up0 ") {
		t.Errorf("10.99.0.0/24 is not on uplink0 alone:\n%s", got)
	}
	if n := strings.Count(e.logs.String(), why); n != 1 {
		t.Errorf("the refusal is logged %d times, want once:\n%s", n, e.logs.String())
	}
	st := e.mustStatus()
	var ready, degraded bool
	for _, c := range st.Conditions {
		named := c.Reason == "LeaseRefused" && strings.Contains(c.Message, "dhcp4 up0: refused: "+why)
		switch c.Type {
		case "Ready":
			ready = !c.Status && named
		case "Degraded":
			degraded = c.Status && named
		}
	}
	if st.Ready || !ready || !degraded {
		t.Errorf("status: ready %v, conditions %+v; want not ready, Ready false and Degraded true for LeaseRefused naming up0", st.Ready, st.Conditions)
	}
	if m := e.netagent("metrics", "--socket", e.socket); !strings.Contains(m.stdout, `netagent_lease_refused{family="ipv4",interface="up0"} 1`) {
		t.Errorf("metrics lack the refused lease:\n%s", m)
	}
	for _, all := range [][]string{nil, {"--all"}} {
		res := e.netagent("check", append([]string{"--via-daemon"}, all...)...)
		if res.code != 1 || !strings.Contains(res.stdout, "dhcp4 up0: refused: "+why) || !strings.Contains(res.stdout, "1 lease refused") {
			t.Errorf("check --via-daemon %v does not report the refusal (exit 1): %s", all, res)
		}
	}
	res := e.netagent("check", "--via-daemon", "--json")
	if res.code != 1 {
		t.Errorf("check --via-daemon --json: exit %d, want 1: %s", res.code, res)
	}
	checkJSONRefusal(t, res)
}
