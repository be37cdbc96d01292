//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/dnsmasqtest"
)

// TestAgentCLIShowJSONRoundTrip: show --json of a host applied from an
// intent with dhcp4 options, an ipv6 section (acceptRA, dhcp6) and a dns
// section is itself a valid intent that means the same: validate accepts
// it, and applying it runs no operation (nor does check find anything).
// Before, show printed the ipv6 section as the sysctls it renders (which
// validate refuses beside dhcp6), dhcp4 without its options (a new
// hostname: a new lease) and no dns.
func TestAgentCLIShowJSONRoundTrip(t *testing.T) {
	e := raEnv(t, dnsmasqtest.Options{DHCP6: true, Domain: "lan.example"})
	e.ip("link", "add", "uplink0", "type", "veth", "peer", "name", "uplink0-peer")
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	file := e.writeFile("edge.json", `{"version": 1,
	  "interfaces": [
	    {"name": "up0", "type": "physical", "dhcp4": {"hostname": "edge-1", "routeMetric": 100},
	     "ipv6": {"acceptRA": true, "acceptRAPrefixes": false, "dhcp6": true}},
	    {"name": "uplink0", "type": "physical", "addresses": ["192.168.1.1/24"]}],
	  "dns": {"nameservers": ["192.0.2.53"], "search": ["corp.example"]}}`)
	e.mustRun(0, "apply", "--wait", "1m", "--resolv-conf", resolv, file)

	show := e.mustRun(0, "show", "--json", "--resolv-conf", resolv)
	shown := e.writeFile("shown.json", show.stdout)
	if res := e.netagent("validate", shown); res.code != 0 {
		t.Fatalf("show --json is no valid intent: %s\n%s", res, show.stdout)
	}
	for _, want := range []string{`"hostname": "edge-1"`, `"routeMetric": 100`, `"acceptRA": true`, `"acceptRAPrefixes": false`,
		`"dhcp6": true`, `"192.0.2.53"`, `"corp.example"`} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("show --json lacks %s:\n%s", want, show.stdout)
		}
	}
	if strings.Contains(show.stdout, "net.ipv6.conf.up0") || strings.Contains(show.stdout, "lan.example") {
		t.Errorf("show --json has the ipv6 section's sysctls or the lease's domain:\n%s", show.stdout)
	}
	res := e.mustRun(0, "apply", "--json", "--wait", "1m", "--resolv-conf", resolv, shown)
	var doc applyLeaseJSON
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, res)
	}
	if len(doc.Operations) != 0 {
		t.Errorf("applying show's output ran %d operations, want none:\n%s\nshown:\n%s", len(doc.Operations), res.stdout, show.stdout)
	}
	e.mustRun(0, "check", "--resolv-conf", resolv, shown)
}
