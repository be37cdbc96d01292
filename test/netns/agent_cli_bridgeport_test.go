//go:build !vmtest

package netns_test

import (
	"strings"
	"testing"
)

// A bridge port's cost and priority go through the whole agent: apply sets
// them, a second apply and check find nothing to do, `show` lists them and
// `show --json` spells them as bridgePort, which applies with no
// operation; an invalid bridgePort is rejected with its path and changes
// nothing. (The VLANs need a kernel with bridge VLAN filtering: the VM
// tests cover them.)
func TestAgentCLIBridgePort(t *testing.T) {
	e := cliNewEnv(t)
	e.ip("link", "add", "eth1", "type", "veth", "peer", "name", "eth1p")
	file := e.writeFile("br.json", `{"version": 1, "interfaces": [
		{"name": "br0", "type": "bridge"},
		{"name": "eth1", "type": "physical", "master": "br0", "bridgePort": {"cost": 100, "priority": 0}}]}`)
	e.mustRun(0, "apply", file)
	slave := e.link("eth1")["linkinfo"].(map[string]any)["info_slave_data"].(map[string]any)
	if slave["cost"] != 100.0 || slave["priority"] != 0.0 {
		t.Errorf("eth1 cost %v priority %v, want 100 and 0", slave["cost"], slave["priority"])
	}
	if res := e.mustRun(0, "apply", file); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("second apply: %s", res)
	}
	e.mustRun(0, "check", file)
	if res := e.mustRun(0, "show"); !strings.Contains(res.stdout, "port eth1 master br0 (bridge) cost 100 priority 0") {
		t.Errorf("show: %s", res)
	}
	js := e.mustRun(0, "show", "--json").stdout
	if !strings.Contains(js, `"bridgePort": {`) || !strings.Contains(js, `"cost": 100`) || !strings.Contains(js, `"priority": 0`) {
		t.Errorf("show --json lacks eth1's bridgePort:\n%s", js)
	}
	shown := e.writeFile("shown.json", js)
	if res := e.mustRun(0, "apply", shown); !strings.Contains(res.stdout, "converged: 0 operations") {
		t.Errorf("applying show --json: %s", res)
	}

	bad := e.writeFile("bad.json", `{"version": 1, "interfaces": [
		{"name": "br0", "type": "bridge"},
		{"name": "eth1", "type": "physical", "master": "br0", "bridgePort": {"priority": 64, "vlans": [{"vid": 10}]}}]}`)
	before := e.snapshot()
	res := e.mustRun(1, "apply", bad)
	for _, want := range []string{
		bad + ": interfaces[1].bridgePort.priority: 64 is out of range 0-63",
		bad + `: interfaces[1].bridgePort.vlans: needs vlanFiltering: true on bridge "br0"`,
		"nothing was changed",
	} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	if after := e.snapshot(); after != before {
		t.Errorf("an invalid intent changed the kernel:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
