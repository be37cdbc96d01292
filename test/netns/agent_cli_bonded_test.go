package netns_test

import (
	"os"
	"testing"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
)

// cliBondedCopy is examples/bonded.json, for the VM, which has none of the
// repository's files. TestAgentCLIBondedCopy keeps the two in step.
const cliBondedCopy = `{
  "version": 1,
  "interfaces": [
    {"name": "eth1", "type": "physical", "master": "bond0"},
    {"name": "eth2", "type": "physical", "master": "bond0"},
    {"name": "bond0", "type": "bond", "mtu": 9000,
     "bond": {"mode": "802.3ad", "miimon": 100, "lacpRate": "fast", "xmitHashPolicy": "layer3+4"}},
    {"name": "bond0.100", "type": "vlan", "vlan": {"parent": "bond0", "id": 100},
     "addresses": ["10.100.0.2/24", "2001:db8:100::2/64"]},
    {"name": "bond0.200", "type": "vlan", "mtu": 1500, "vlan": {"parent": "bond0", "id": 200},
     "addresses": ["10.200.0.2/24"]}
  ],
  "routes": [
    {"to": "default", "via": "10.100.0.1", "metric": 100},
    {"to": "default", "via": "2001:db8:100::1"},
    {"to": "10.0.0.0/8", "via": "10.200.0.1", "dev": "bond0.200"}
  ],
  "sysctls": {
    "net.ipv4.conf.bond0.100.rp_filter": "2",
    "net.ipv6.conf.bond0.200.disable_ipv6": "1"
  }
}
`

// The VM's copy of the bonded example is the example.
func TestAgentCLIBondedCopy(t *testing.T) {
	data, err := os.ReadFile("../../examples/bonded.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != cliBondedCopy {
		t.Errorf("examples/bonded.json and cliBondedCopy differ: update the copy")
	}
	in, err := intent.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := render.Render(in); err != nil {
		t.Fatal(err)
	}
}
