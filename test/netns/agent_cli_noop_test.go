//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/dnsmasqtest"
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
