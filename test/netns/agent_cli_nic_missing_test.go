//go:build !vmtest

package netns_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// cliMissingNICIntent: two physical interfaces whose NICs the namespace
// lacks, one by name (eth9) and one by match (lan0), each with an address.
const cliMissingNICIntent = `{"version": 1,
  "interfaces": [
    {"name": "eth9", "type": "physical", "addresses": ["192.0.2.9/24"]},
    {"name": "lan0", "type": "physical", "match": {"mac": "02:00:00:00:09:99"}, "addresses": ["192.0.2.19/24"]}
  ]}`

// Physical NICs that do not exist on the host (issue 29, point 8): plan,
// apply and check say that the NIC does not exist, naming it and its
// match; apply does not wait its --wait for a NIC nothing creates (before:
// "blocked: waiting for link/eth9 (not in the intended state)" and the
// full wait); with --wait-for-nics it waits, and a NIC plugged in during
// the wait is configured.
func TestAgentCLIMissingNIC(t *testing.T) {
	e := cliNewEnv(t)
	file := e.writeFile("nics.json", cliMissingNICIntent)
	says := []string{
		"address/eth9/192.0.2.9/24: blocked: waiting for interface/eth9 (NIC eth9 does not exist on this host)",
		"address/lan0/192.0.2.19/24: blocked: waiting for interface/lan0 (failed: physical interface lan0: no NIC matches mac 02:00:00:00:09:99) (NIC lan0 does not exist on this host)",
		"interface/eth9: blocked: NIC eth9 does not exist on this host (a physical interface, found by the name eth9; nothing in the intent creates it)",
		"interface/lan0: predicted to fail: create failed: physical interface lan0: no NIC matches mac 02:00:00:00:09:99: the NIC does not exist on this host",
		"NICs eth9, lan0 do not exist on this host: apply does not wait for a NIC nothing creates (--wait-for-nics waits up to --wait for it to be plugged in); the daemon configures it when it appears",
	}
	res := e.mustRun(1, "plan", file)
	for _, want := range says {
		if !strings.Contains(res.stdout, want+"\n") {
			t.Errorf("plan does not say %q:\n%s", want, res)
		}
	}
	if strings.Contains(res.stdout, "not in the intended state") || strings.Contains(res.stdout, "apply waits for link events") {
		t.Errorf("plan says apply waits for the NICs:\n%s", res)
	}

	start := time.Now()
	res = e.mustRun(1, "apply", "--wait", "10m", file)
	if took := time.Since(start); took > 5*time.Minute {
		t.Errorf("apply took %v: it waited for NICs nothing creates", took)
	}
	for _, want := range says {
		want = strings.Replace(want, ": predicted to fail: ", ": failed: ", 1)
		if !strings.Contains(res.stderr, want+"\n") {
			t.Errorf("apply does not say %q:\n%s", want, res)
		}
	}

	res = e.mustRun(1, "check", file)
	for _, want := range []string{
		"interface/eth9: missing (want interface eth9 physical up); NIC eth9 does not exist on this host\n",
		"interface/lan0: missing (want interface lan0 physical up match mac 02:00:00:00:09:99); no NIC on this host is named lan0 (apply renames the NIC that matches mac 02:00:00:00:09:99, if one does)\n",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("check does not say %q:\n%s", want, res)
		}
	}

	// --wait-for-nics waits; eth9 and a NIC lan0's match finds are
	// plugged in (veth ends, admin down) during the wait.
	_, waiting, wait := e.startSeeing("waiting for link events", "apply", "--log-level", "debug", "--wait-for-nics", "--wait", "10m", file)
	<-waiting
	e.ip("link", "add", "eth9", "type", "veth", "peer", "name", "eth9-peer")
	e.ip("link", "add", "nic1", "address", "02:00:00:00:09:99", "type", "veth", "peer", "name", "nic1-peer")
	if res := wait(); res.code != 0 || !strings.Contains(res.stdout, "converged: ") {
		t.Fatalf("apply --wait-for-nics with the NICs plugged in during the wait: want exit 0, got %s", res)
	}
	for dev, addr := range map[string]string{"eth9": "192.0.2.9/24", "lan0": "192.0.2.19/24"} {
		if got := e.ip("-br", "addr", "show", "dev", dev); !strings.Contains(got, addr) {
			t.Errorf("%s: %s, want %s", dev, got, addr)
		}
	}
}

// A plan whose only blocked items wait for the carrier of a link the
// same change sets up (issue 29, point 9): apply sets wan0 up, waits for
// the carrier and converges, so plan exits 0 with the note (before: exit 1,
// "would not converge"), and --detailed-exitcode exits 2.
func TestAgentCLIPlanCarrierWait(t *testing.T) {
	e, file := cliWaitEnv(t, true)
	res := e.mustRun(0, "plan", file)
	for _, want := range []string{
		"  !  route/main 0.0.0.0/0 metric 100: blocked: waiting for link/wan0 (carrier up)\n",
		"  !  route/main 198.51.100.0/24 metric 0: blocked: waiting for link/wan0 (carrier up)\n",
		"  ~  apply sets wan0 up and waits for the carrier (up to --wait) before it adds what waits for it\n",
		"plan: 2 operations; 2 items wait for the carrier of a link it sets up (apply waits for it)\n",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("plan does not say %q:\n%s", want, res)
		}
	}
	if res := e.netagent("plan", "--detailed-exitcode", file); res.code != 2 {
		t.Errorf("plan --detailed-exitcode: want exit 2, got %s", res)
	}
	var doc struct {
		Problems []struct{ Item, WaitsForCarrier string }
	}
	if err := json.Unmarshal([]byte(e.mustRun(0, "plan", "--json", file).stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Problems) != 2 || doc.Problems[0].WaitsForCarrier != "wan0" || doc.Problems[1].WaitsForCarrier != "wan0" {
		t.Errorf("plan --json problems: %+v", doc.Problems)
	}
	e.mustRun(0, "apply", file)
	// Another blocked item, one behind a clash, makes the plan fail again.
	e.ip("link", "set", "wan0", "down")
	e.ip("link", "add", "clash0", "type", "bridge")
	clash := e.writeFile("clash.json", strings.Replace(cliWaitIntent, `"interfaces": [`,
		`"interfaces": [{"name": "clash0", "type": "bridge"}, `, 1))
	if res := e.netagent("plan", clash); res.code != 1 || !strings.Contains(res.stdout, "would not converge") {
		t.Errorf("a plan with a clash beside the carrier wait: want exit 1, got %s", res)
	}
}
