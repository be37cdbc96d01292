//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/dnsmasqtest"
)

// TestAgentCLILeaseClaimsProtectedSubnet: dnsmasq sends an option-121
// route to 10.99.0.0/24, the subnet of the protected uplink0 (the mgmt
// link), beside a less specific 10.0.0.0/8 and a default route. apply
// installs the lease's address, its default route and 10.0.0.0/8 (longest
// prefix leaves 10.99.0.0/24 on uplink0) but not the route into
// uplink0's subnet, and says why; the kernel, read back with ip -j,
// routes 10.99.0.5 through uplink0; check reports the refusal (exit 1).
func TestAgentCLILeaseClaimsProtectedSubnet(t *testing.T) {
	t.Parallel()
	e := cliNewEnv(t)
	dnsmasqtest.Start(t, e.tgt, "up0", dnsmasqtest.Options{Routes: []netip.Prefix{
		netip.MustParsePrefix("10.99.0.0/24"), netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("0.0.0.0/0")}})
	file := e.writeFile("dhcp.json", `{"version": 1, "interfaces": [
	  {"name": "up0", "type": "physical", "dhcp4": {"routeMetric": 100}},
	  {"name": "uplink0", "type": "physical", "protected": true, "addresses": ["10.99.0.1/24"]}]}`)
	res := e.mustRun(0, "apply", "--wait", "1m", file)
	if !strings.Contains(res.stdout, "refused: lease route to 10.99.0.0/24 would take traffic from uplink0's address 10.99.0.1/24") {
		t.Errorf("apply does not report the refused route: %s", res)
	}
	e.leasedAddr()
	var up0 []string
	for _, r := range e.ipJSON("-4", "route", "show", "dev", "up0") {
		up0 = append(up0, r["dst"].(string))
	}
	for _, want := range []string{"default", "10.0.0.0/8"} {
		if !strings.Contains(strings.Join(up0, " "), want) {
			t.Errorf("lease route %s missing on up0: %v", want, up0)
		}
	}
	for _, dst := range up0 {
		if dst == "10.99.0.0/24" {
			t.Errorf("the lease's route into uplink0's subnet is on up0: %v", up0)
		}
	}
	got := e.ipJSON("-4", "route", "get", "10.99.0.5")
	if len(got) != 1 || got[0]["dev"] != "uplink0" {
		t.Errorf("10.99.0.5 goes through %v, want uplink0", got)
	}
	res = e.mustRun(1, "check", file)
	if !strings.Contains(res.stdout, "dhcp4 up0: refused: lease route to 10.99.0.0/24") {
		t.Errorf("check does not report the refusal: %s", res)
	}
	res = e.mustRun(1, "check", "--all", file)
	if !strings.Contains(res.stdout, "dhcp4 up0: refused: lease route to 10.99.0.0/24") || !strings.Contains(res.stdout, "1 lease refused") {
		t.Errorf("check --all does not report the refusal: %s", res)
	}
	checkJSONRefusal(t, e.mustRun(1, "check", "--json", file))
}

// checkJSONRefusal checks that check --json says up0's DHCPv4 lease is
// refused in part, and that the check did not converge.
func checkJSONRefusal(t *testing.T, res cliResult) {
	t.Helper()
	var doc struct {
		Converged     bool `json:"converged"`
		LeasesRefused []struct {
			Interface, Family, Refused string
		} `json:"leasesRefused"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("check --json: %v: %s", err, res)
	}
	if doc.Converged || len(doc.LeasesRefused) != 1 || doc.LeasesRefused[0].Interface != "up0" || doc.LeasesRefused[0].Family != "ipv4" ||
		!strings.Contains(doc.LeasesRefused[0].Refused, "lease route to 10.99.0.0/24") {
		t.Errorf("check --json does not report the refusal: %+v\n%s", doc, res)
	}
}
