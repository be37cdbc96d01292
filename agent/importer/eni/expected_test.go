package eni

import (
	"encoding/json"
	"testing"

	"github.com/netagent/netagent/agent/importer"
	"github.com/netagent/netagent/agent/intent"
)

// The kinds the host kernel cannot run (bonds, 802.1Q VLANs, VRFs; and
// bridge VLANs: it has no VLAN filtering) and the VM cannot compare with
// ifupdown2 (it has no Python) are checked here: the intent each file
// imports to against one written by hand from what ifupdown2 does with it
// (read in its addons: bond.py, vlan.py, vrf.py, bridge.py, address.py):
// MTU 1500 where no mtu is given on a bridge, a bond and a NIC that is no
// bond's port, as address.py sets it.
var expectedIntents = []struct{ name, eni, want string }{{
	name: "bonds, VLANs, a VLAN-aware bridge",
	eni: `auto lo
iface lo inet loopback

auto bond0
iface bond0 inet static
  bond-slaves eth0 eth1
  bond-mode 802.3ad
  bond-miimon 100
  bond-lacp-rate fast
  bond-xmit-hash-policy layer3+4
  bond-min-links 1
  address 192.0.2.10/24
  gateway 192.0.2.1
  mtu 9000

auto bond0.100
iface bond0.100 inet static
  address 198.51.100.2/24

auto vlan200
iface vlan200
  vlan-raw-device bond0
  address 203.0.113.2/24

auto br0
iface br0
  bridge-vlan-aware yes
  bridge-ports bond1 eth4
  bridge-vids 10-11
  bridge-pvid 11

auto bond1
iface bond1
  bond-slaves eth2 eth3
  bond-mode active-backup
  bond-primary eth3

auto eth4
iface eth4
  bridge-access 10
`,
	want: `{"version": 1, "interfaces": [
  {"name": "bond0", "type": "bond", "mtu": 9000, "addresses": ["192.0.2.10/24"],
   "bond": {"mode": "802.3ad", "miimon": 100, "lacpRate": "fast", "xmitHashPolicy": "layer3+4", "minLinks": 1}},
  {"name": "bond0.100", "type": "vlan", "addresses": ["198.51.100.2/24"], "vlan": {"parent": "bond0", "id": 100}},
  {"name": "vlan200", "type": "vlan", "addresses": ["203.0.113.2/24"], "vlan": {"parent": "bond0", "id": 200}},
  {"name": "br0", "type": "bridge", "mtu": 1500, "bridge": {"vlanFiltering": true}},
  {"name": "bond1", "type": "bond", "mtu": 1500, "master": "br0", "bond": {"mode": "active-backup", "primary": "eth3"},
   "bridgePort": {"vlans": [{"vid": 11, "pvid": true, "untagged": true}, {"vid": 10}]}},
  {"name": "eth4", "type": "physical", "mtu": 1500, "master": "br0", "bridgePort": {"vlans": [{"vid": 10, "pvid": true, "untagged": true}]}},
  {"name": "eth0", "type": "physical", "master": "bond0"},
  {"name": "eth1", "type": "physical", "master": "bond0"},
  {"name": "eth2", "type": "physical", "master": "bond1"},
  {"name": "eth3", "type": "physical", "master": "bond1"}
 ],
 "routes": [{"to": "0.0.0.0/0", "via": "192.0.2.1", "dev": "bond0", "onLink": true}]}`,
}, {
	name: "a VRF, its member's gateway in its table",
	eni: `auto eth0
iface eth0 inet static
  address 192.0.2.10/24
  gateway 192.0.2.1
  vrf blue

auto blue
iface blue
  vrf-table 1001

auto eth1
iface eth1 inet static
  address 198.51.100.1/24
`,
	want: `{"version": 1, "interfaces": [
  {"name": "eth0", "type": "physical", "mtu": 1500, "master": "blue", "addresses": ["192.0.2.10/24"]},
  {"name": "blue", "type": "vrf", "vrf": {"table": 1001}},
  {"name": "eth1", "type": "physical", "mtu": 1500, "addresses": ["198.51.100.1/24"]}
 ],
 "routes": [{"to": "0.0.0.0/0", "via": "192.0.2.1", "dev": "eth0", "table": 1001, "onLink": true}]}`,
}}

func TestExpectedIntents(t *testing.T) {
	for _, tc := range expectedIntents {
		res, err := Parse("f", []byte(tc.eni), importer.Options{})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var want intent.Intent
		if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
			t.Fatalf("%s: the expected intent: %v", tc.name, err)
		}
		got, _ := json.Marshal(res.Intent)
		exp, _ := json.Marshal(&want)
		if string(got) != string(exp) {
			t.Errorf("%s:\ngot  %s\nwant %s", tc.name, got, exp)
		}
	}
}
