//go:build !vmtest

package netns_test

import (
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/dnsmasqtest"
)

// TestAgentCLIApplyDHCP4Bridge: DHCP on a bridge netagent creates. br0
// has dhcp4 and the port eth0, a veth whose peer (another namespace)
// has dnsmasq: one apply creates br0, enslaves eth0, gets the lease on
// br0 and converges (exit 0), the leased address on br0 in `ip -j addr`
// and the default route through the server's gateway; a second apply
// has nothing to do. (The lease once waited forever for the carrier of
// link/br0, an item only interfaces netagent does not create have.)
func TestAgentCLIApplyDHCP4Bridge(t *testing.T) {
	e := cliNewEnv(t)
	dnsmasqtest.Start(t, e.tgt, "eth0", dnsmasqtest.Options{})
	file := e.writeFile("br.json", `{"version": 1, "interfaces": [
		{"name": "br0", "type": "bridge", "dhcp4": {}},
		{"name": "eth0", "type": "physical", "master": "br0"}]}`)
	res := e.mustRun(0, "apply", "--wait", "1m", file)
	if !strings.Contains(res.stdout, "dhcp4 br0: 10.77.0.") {
		t.Errorf("apply does not report the lease on br0: %s", res)
	}
	addr := e.leasedAddrOn("br0")
	if m := e.link("eth0")["master"]; m != "br0" {
		t.Errorf("eth0's master is %v, want br0", m)
	}
	if routes := e.ip("-4", "route", "show", "dev", "br0"); !strings.Contains(routes, "default via 10.77.0.1") {
		t.Errorf("no default route through the lease's gateway on br0:\n%s", routes)
	}
	if res := e.mustRun(0, "apply", "--wait", "1m", file); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply: %s", res)
	}
	if again := e.leasedAddrOn("br0"); again != addr {
		t.Errorf("the second apply changed br0's address from %v to %v", addr, again)
	}
}
