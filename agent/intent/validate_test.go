package intent

import (
	"slices"
	"testing"
)

func TestExamplesAreValid(t *testing.T) {
	for _, name := range []string{"gateway.json", "bonded.json"} {
		t.Run(name, func(t *testing.T) {
			in, err := Parse(readTestdata(t, name))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if err := in.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
		})
	}
}

func TestValidateFillsArgs(t *testing.T) {
	in := mustParse(t, string(readTestdata(t, "gateway.json")))
	if err := in.Validate(); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"-i", "br-lan", "-o", "uplink0", "-j", "ACCEPT"},
		{"-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT"}}
	if got := in.Firewall.Chains[0].Args; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Args = %q, want %q", got, want)
	}
}

func TestValidateVersion(t *testing.T) {
	checkMessages(t, (&Intent{}).Validate(), []string{"version: 0 is not supported (want 1)"})
}

// validateCase is an intent document and the exact errors Validate reports.
type validateCase struct {
	name string
	doc  string // the members of a version 1 intent
	want []string
}

// runValidateCases runs Validate on each case; the valid ones must also
// pass the schema, which must never be stricter than the agent.
func runValidateCases(t *testing.T, cases []validateCase) {
	t.Helper()
	sc := loadSchema(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkMessages(t, mustParse(t, doc(tc.doc)).Validate(), tc.want)
			if errs := sc.validateJSON([]byte(doc(tc.doc))); len(tc.want) == 0 && len(errs) > 0 {
				t.Errorf("valid for Validate, not for the schema: %q", errs)
			}
		})
	}
}

func TestValidateInterfaceNames(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"too long", `"interfaces": [{"name": "abcdefghijklmnop", "type": "bridge"}]`,
			[]string{`interfaces[0].name: "abcdefghijklmnop" is longer than 15 bytes`}},
		{"slash", `"interfaces": [{"name": "br/lan", "type": "bridge"}]`,
			[]string{`interfaces[0].name: "br/lan" contains '/', which an interface name cannot`}},
		{"space", `"interfaces": [{"name": "br lan", "type": "bridge"}]`,
			[]string{`interfaces[0].name: "br lan" contains ' ', which an interface name cannot`}},
		{"colon", `"interfaces": [{"name": "eth0:1", "type": "physical"}]`,
			[]string{`interfaces[0].name: "eth0:1" contains ':', which an interface name cannot`}},
		{"dot dot", `"interfaces": [{"name": "..", "type": "bridge"}]`,
			[]string{`interfaces[0].name: ".." is not a valid interface name`}},
		{"missing", `"interfaces": [{"type": "bridge"}]`,
			[]string{`interfaces[0].name: is required`}},
		{"duplicate", `"interfaces": [{"name": "br0", "type": "bridge"}, {"name": "br0", "type": "bridge"}]`,
			[]string{`interfaces[1].name: interface "br0" is already defined at interfaces[0]`}},
		{"duplicate of a veth peer", `"interfaces": [
			{"name": "a", "type": "veth", "veth": {"peer": "b"}},
			{"name": "b", "type": "bridge"}]`,
			[]string{`interfaces[1].name: interface "b" is already defined at interfaces[0].veth.peer`}},
		{"peer is own name", `"interfaces": [{"name": "a", "type": "veth", "veth": {"peer": "a"}}]`,
			[]string{`interfaces[0].veth.peer: "a" is the veth's own name`}},
		{"peer missing", `"interfaces": [{"name": "a", "type": "veth", "veth": {}}]`,
			[]string{`interfaces[0].veth.peer: is required`}},
		{"peers in a netns", `"interfaces": [
			{"name": "a", "type": "veth", "veth": {"peer": "eth0", "peerNetns": "ns1"}},
			{"name": "b", "type": "veth", "veth": {"peer": "eth0", "peerNetns": "ns1"}},
			{"name": "c", "type": "veth", "veth": {"peer": "eth0", "peerNetns": "ns2"}},
			{"name": "eth0", "type": "physical"},
			{"name": "d", "type": "veth", "veth": {"peer": "x", "peerNetns": "a/b"}}]`,
			[]string{`interfaces[1].veth.peer: interface "eth0" in netns "ns1" is already defined at interfaces[0].veth.peer`,
				`interfaces[4].veth.peerNetns: "a/b" contains '/', which a namespace name cannot`}},
	})
}

func TestValidateInterfaceFields(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"type missing", `"interfaces": [{"name": "a"}]`,
			[]string{`interfaces[0].type: is required (one of physical, bond, vlan, bridge, veth, macvlan, vxlan, dummy, gre, ipip, sit, ip6tnl, wireguard, ipvlan, vrf)`}},
		{"type unknown", `"interfaces": [{"name": "a", "type": "vlna"}]`,
			[]string{`interfaces[0].type: "vlna" is not one of physical, bond, vlan, bridge, veth, macvlan, vxlan, dummy, gre, ipip, sit, ip6tnl, wireguard, ipvlan, vrf`}},
		{"mtu", `"interfaces": [{"name": "a", "type": "physical", "mtu": 67}]`,
			[]string{`interfaces[0].mtu: 67 is out of range 68-65535`}},
		{"mtu too small for IPv6", `"interfaces": [{"name": "a", "type": "physical", "mtu": 1000, "addresses": ["2001:db8::1/64"]}]`,
			[]string{`interfaces[0].mtu: 1000 is below 1280, the minimum for IPv6 addresses`}},
		{"mtu above the parent's", `"interfaces": [{"name": "eth0", "type": "physical", "mtu": 1500}, {"name": "eth1", "type": "physical"},
			{"name": "v5", "type": "vlan", "mtu": 9000, "vlan": {"parent": "eth0", "id": 5}},
			{"name": "v6", "type": "vlan", "mtu": 9000, "vlan": {"parent": "eth1", "id": 6}},
			{"name": "m0", "type": "macvlan", "mtu": 1501, "macvlan": {"parent": "eth0"}},
			{"name": "vx4", "type": "vxlan", "mtu": 1500, "vxlan": {"vni": 4, "parent": "eth0"}},
			{"name": "vx6", "type": "vxlan", "mtu": 1450, "vxlan": {"vni": 6, "local": "2001:db8::1", "parent": "eth0"}},
			{"name": "vx7", "type": "vxlan", "mtu": 1450, "vxlan": {"vni": 7, "local": "192.0.2.1", "parent": "eth0"}}]`,
			[]string{`interfaces[2].mtu: 9000 is above 1500, the mtu of its parent "eth0"`,
				`interfaces[4].mtu: 1501 is above 1500, the mtu of its parent "eth0"`,
				`interfaces[5].mtu: 1500 is above 1450, the mtu of its parent "eth0" less the IPv4 VXLAN header (50)`,
				`interfaces[6].mtu: 1450 is above 1430, the mtu of its parent "eth0" less the IPv6 VXLAN header (70)`}},
		{"state", `"interfaces": [{"name": "a", "type": "physical", "state": "UP"}]`,
			[]string{`interfaces[0].state: "UP" is not one of up, down`}},
		{"mac on physical", `"interfaces": [{"name": "a", "type": "physical", "mac": "02:00:00:00:00:01"}]`,
			[]string{`interfaces[0].mac: can only be set on virtual interfaces, not on physical "a"`}},
		{"bad mac", `"interfaces": [{"name": "a", "type": "bridge", "mac": "02-00-00-00-00-01"}]`,
			[]string{`interfaces[0].mac: "02-00-00-00-00-01" is not a MAC address (like 02:00:00:00:00:01)`}},
		{"multicast mac", `"interfaces": [{"name": "a", "type": "bridge", "mac": "01:00:5e:00:00:01"}]`,
			[]string{`interfaces[0].mac: 01:00:5e:00:00:01 is a multicast MAC address`}},
		{"zero mac", `"interfaces": [{"name": "a", "type": "bridge", "mac": "00:00:00:00:00:00"}]`,
			[]string{`interfaces[0].mac: 00:00:00:00:00:00 is the zero MAC address`}},
		{"alias", `"interfaces": [{"name": "a", "type": "bridge", "alias": "x\ny"}]`,
			[]string{`interfaces[0].alias: contains a control character`}},
	})
}

func TestValidateKindSections(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"vlan section on a bridge", `"interfaces": [{"name": "br0", "type": "bridge", "vlan": {"parent": "x", "id": 5}}]`,
			[]string{`interfaces[0].vlan: not allowed for type "bridge"`}},
		{"two sections", `"interfaces": [{"name": "a", "type": "physical", "bond": {}, "bridge": {}}]`,
			[]string{`interfaces[0].bond: not allowed for type "physical"`, `interfaces[0].bridge: not allowed for type "physical"`}},
		{"vlan without its section", `"interfaces": [{"name": "v", "type": "vlan"}]`,
			[]string{`interfaces[0].vlan: is required for type "vlan"`}},
		{"veth without its section", `"interfaces": [{"name": "v", "type": "veth"}]`,
			[]string{`interfaces[0].veth: is required for type "veth"`}},
		{"bond and bridge sections are optional", `"interfaces": [{"name": "b", "type": "bond"}, {"name": "br", "type": "bridge"}]`, nil},
	})
}

func TestValidateReferences(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"master undefined", `"interfaces": [{"name": "a", "type": "physical", "master": "bond9"}]`,
			[]string{`interfaces[0].master: interface "bond9" is not defined`}},
		{"master not a bond or bridge", `"interfaces": [{"name": "a", "type": "physical", "master": "b"}, {"name": "b", "type": "physical"}]`,
			[]string{`interfaces[0].master: "b" is a physical interface, not a bond, bridge or vrf`}},
		{"master is a veth peer", `"interfaces": [{"name": "a", "type": "physical", "master": "p"}, {"name": "v", "type": "veth", "veth": {"peer": "p"}}]`,
			[]string{`interfaces[0].master: "p" is a veth peer, not a bond, bridge or vrf`}},
		{"own master", `"interfaces": [{"name": "br0", "type": "bridge", "master": "br0"}]`,
			[]string{`interfaces[0].master: interface "br0" cannot be its own master`}},
		{"bridge in a bridge", `"interfaces": [{"name": "br0", "type": "bridge", "master": "br1"}, {"name": "br1", "type": "bridge"}]`,
			[]string{`interfaces[0].master: bridge "br0" cannot be a port of bridge "br1"`}},
		{"cycle", `"interfaces": [{"name": "br0", "type": "bridge", "master": "bond0"}, {"name": "bond0", "type": "bond", "master": "br0"}]`,
			[]string{`interfaces[1].master: interfaces form a cycle: bond0 -> br0 -> bond0`}},
		{"parent cycle", `"interfaces": [
			{"name": "v1", "type": "vlan", "vlan": {"parent": "v2", "id": 1}},
			{"name": "v2", "type": "vlan", "vlan": {"parent": "v1", "id": 2}}]`,
			[]string{`interfaces[0].vlan.parent: interfaces form a cycle: v1 -> v2 -> v1`}},
		{"vlan parent undefined", `"interfaces": [{"name": "v", "type": "vlan", "vlan": {"parent": "eth9", "id": 5}}]`,
			[]string{`interfaces[0].vlan.parent: interface "eth9" is not defined`}},
		{"own parent", `"interfaces": [{"name": "m", "type": "macvlan", "macvlan": {"parent": "m"}}]`,
			[]string{`interfaces[0].macvlan.parent: interface "m" cannot be its own parent`}},
		{"parent is a veth peer", `"interfaces": [{"name": "v", "type": "veth", "veth": {"peer": "p"}},
			{"name": "m", "type": "macvlan", "macvlan": {"parent": "p"}}]`, nil},
		{"vxlan parent undefined", `"interfaces": [{"name": "vx", "type": "vxlan", "vxlan": {"vni": 1, "parent": "eth9"}}]`,
			[]string{`interfaces[0].vxlan.parent: interface "eth9" is not defined`}},
	})
}

func TestValidateBond(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"mode", `"interfaces": [{"name": "b", "type": "bond", "bond": {"mode": "lacp"}}]`,
			[]string{`interfaces[0].bond.mode: "lacp" is not one of balance-rr, active-backup, balance-xor, broadcast, 802.3ad, balance-tlb, balance-alb`}},
		{"lacpRate outside 802.3ad", `"interfaces": [{"name": "b", "type": "bond", "bond": {"mode": "active-backup", "lacpRate": "fast"}}]`,
			[]string{`interfaces[0].bond.lacpRate: only allowed in mode 802.3ad, not active-backup`}},
		{"lacpRate value", `"interfaces": [{"name": "b", "type": "bond", "bond": {"mode": "802.3ad", "lacpRate": "quick"}}]`,
			[]string{`interfaces[0].bond.lacpRate: "quick" is not one of slow, fast`}},
		{"xmitHashPolicy outside its modes", `"interfaces": [{"name": "b", "type": "bond", "bond": {"xmitHashPolicy": "layer3+4"}}]`,
			[]string{`interfaces[0].bond.xmitHashPolicy: only allowed in modes balance-xor, 802.3ad, balance-tlb, not balance-rr`}},
		{"minLinks", `"interfaces": [{"name": "b", "type": "bond", "bond": {"mode": "802.3ad", "minLinks": -1}}]`,
			[]string{`interfaces[0].bond.minLinks: -1 is out of range 0-2147483647`}},
		{"miimon", `"interfaces": [{"name": "b", "type": "bond", "bond": {"miimon": -100}}]`,
			[]string{`interfaces[0].bond.miimon: -100 is out of range 0-2147483647`}},
		{"primary not a port", `"interfaces": [
			{"name": "bond0", "type": "bond", "bond": {"mode": "active-backup", "primary": "eth2"}},
			{"name": "eth1", "type": "physical", "master": "bond0"},
			{"name": "eth2", "type": "physical"}]`,
			[]string{`interfaces[0].bond.primary: "eth2" is not a port of bond "bond0"`}},
		{"primary is a port", `"interfaces": [
			{"name": "bond0", "type": "bond", "bond": {"mode": "active-backup", "primary": "eth1"}},
			{"name": "eth1", "type": "physical", "master": "bond0"}]`, nil},
		{"primary in 802.3ad", `"interfaces": [
			{"name": "bond0", "type": "bond", "bond": {"mode": "802.3ad", "primary": "eth1"}},
			{"name": "eth1", "type": "physical", "master": "bond0"}]`,
			[]string{`interfaces[0].bond.primary: only allowed in modes active-backup, balance-tlb, balance-alb, not 802.3ad`}},
		{"port with addresses", `"interfaces": [
			{"name": "bond0", "type": "bond"},
			{"name": "eth1", "type": "physical", "master": "bond0", "addresses": ["192.0.2.1/24"]}]`,
			[]string{`interfaces[1].addresses: "eth1" is a port of bond "bond0" and cannot have addresses`}},
	})
}

func TestValidateVLANBridgeMacvlanVXLAN(t *testing.T) {
	eth0 := `{"name": "eth0", "type": "physical"}`
	runValidateCases(t, []validateCase{
		{"vlan id", `"interfaces": [` + eth0 + `, {"name": "v", "type": "vlan", "vlan": {"parent": "eth0", "id": 5000}}]`,
			[]string{`interfaces[1].vlan.id: 5000 is out of range 1-4094`}},
		{"vlan id missing", `"interfaces": [` + eth0 + `, {"name": "v", "type": "vlan", "vlan": {"parent": "eth0"}}]`,
			[]string{`interfaces[1].vlan.id: 0 is out of range 1-4094`}},
		{"vlan protocol", `"interfaces": [` + eth0 + `, {"name": "v", "type": "vlan", "vlan": {"parent": "eth0", "id": 5, "protocol": "802.1Q"}}]`,
			[]string{`interfaces[1].vlan.protocol: "802.1Q" is not one of 802.1q, 802.1ad`}},
		{"vlan twice on a parent", `"interfaces": [` + eth0 + `,
			{"name": "v1", "type": "vlan", "vlan": {"parent": "eth0", "id": 5}},
			{"name": "v2", "type": "vlan", "vlan": {"parent": "eth0", "id": 5, "protocol": "802.1q"}},
			{"name": "v3", "type": "vlan", "vlan": {"parent": "eth0", "id": 5, "protocol": "802.1ad"}}]`,
			[]string{`interfaces[2].vlan.id: 802.1q VLAN 5 on "eth0" is already defined at interfaces[1].vlan.id`}},
		{"forward delay with a unit, with stp", `"interfaces": [{"name": "br0", "type": "bridge", "bridge": {"stp": true, "forwardDelay": "1s"}}]`,
			[]string{`interfaces[0].bridge.forwardDelay: "1s" is out of range 2s-30s with stp on`}},
		{"forward delay not in centiseconds", `"interfaces": [{"name": "br0", "type": "bridge", "bridge": {"forwardDelay": "15.005s"}}]`,
			[]string{`interfaces[0].bridge.forwardDelay: "15.005s" is not a whole number of centiseconds (10ms)`}},
		{"forward delay no duration", `"interfaces": [{"name": "br0", "type": "bridge", "bridge": {"forwardDelay": "15"}}]`,
			[]string{`interfaces[0].bridge.forwardDelay: "15" is no duration: give centiseconds (1500) or a duration with its unit ("15s")`}},
		{"forward delay above 30s", `"interfaces": [{"name": "br0", "type": "bridge", "bridge": {"forwardDelay": "31s"}}]`,
			[]string{`interfaces[0].bridge.forwardDelay: "31s" is out of range 0s-30s`}},
		{"forward delay with stp", `"interfaces": [{"name": "br0", "type": "bridge", "bridge": {"stp": true, "forwardDelay": 100}}]`,
			[]string{`interfaces[0].bridge.forwardDelay: 100 is out of range 200-3000 (centiseconds) with stp on`}},
		{"forward delay", `"interfaces": [{"name": "br0", "type": "bridge", "bridge": {"forwardDelay": 3001}}]`,
			[]string{`interfaces[0].bridge.forwardDelay: 3001 is out of range 0-3000`}},
		{"macvlan", `"interfaces": [{"name": "m", "type": "macvlan", "macvlan": {"mode": "bridged"}}]`,
			[]string{`interfaces[0].macvlan.parent: is required`,
				`interfaces[0].macvlan.mode: "bridged" is not one of private, vepa, bridge, passthru, source`}},
		{"macvlan on a port", `"interfaces": [{"name": "eth0", "type": "physical", "master": "br0"}, {"name": "br0", "type": "bridge"},
			{"name": "eth1", "type": "physical", "master": "bond0"}, {"name": "bond0", "type": "bond"},
			{"name": "m0", "type": "macvlan", "macvlan": {"parent": "eth0"}},
			{"name": "m1", "type": "macvlan", "macvlan": {"parent": "eth1"}},
			{"name": "m2", "type": "macvlan", "macvlan": {"parent": "br0"}},
			{"name": "m3", "type": "macvlan", "macvlan": {"parent": "bond0"}}]`,
			[]string{`interfaces[4].macvlan.parent: "eth0" is a port of "br0": the kernel lets a link be a bond or bridge port or the parent of macvlans, not both`,
				`interfaces[5].macvlan.parent: "eth1" is a port of "bond0": the kernel lets a link be a bond or bridge port or the parent of macvlans, not both`}},
		{"on the loopback interface", `"interfaces": [{"name": "lo", "type": "physical"},
			{"name": "lo.5", "type": "vlan", "vlan": {"parent": "lo", "id": 5}},
			{"name": "m0", "type": "macvlan", "macvlan": {"parent": "lo"}},
			{"name": "vx", "type": "vxlan", "vxlan": {"vni": 5, "parent": "lo"}}]`,
			[]string{`interfaces[1].vlan.parent: the loopback interface cannot be the parent of a VLAN (the kernel refuses it)`,
				`interfaces[2].macvlan.parent: the loopback interface cannot be the parent of a macvlan (the kernel refuses it)`}},
		{"vni", `"interfaces": [{"name": "vx", "type": "vxlan", "vxlan": {"vni": 16777216}}]`,
			[]string{`interfaces[0].vxlan.vni: 16777216 is out of range 1-16777215`}},
		{"remote and group", `"interfaces": [` + eth0 + `, {"name": "vx", "type": "vxlan", "vxlan": {"vni": 1, "remote": "192.0.2.2", "group": "239.1.1.1", "parent": "eth0"}}]`,
			[]string{`interfaces[1].vxlan.group: not allowed together with remote`}},
		{"group not multicast", `"interfaces": [{"name": "vx", "type": "vxlan", "vxlan": {"vni": 1, "group": "192.0.2.2"}}]`,
			[]string{`interfaces[0].vxlan.group: 192.0.2.2 is not a multicast address`}},
		{"remote not unicast", `"interfaces": [{"name": "vx", "type": "vxlan", "vxlan": {"vni": 1, "remote": "239.1.1.1"}}]`,
			[]string{`interfaces[0].vxlan.remote: 239.1.1.1 is not a unicast address`}},
		{"families", `"interfaces": [{"name": "vx", "type": "vxlan", "vxlan": {"vni": 1, "local": "192.0.2.1", "remote": "2001:db8::2"}}]`,
			[]string{`interfaces[0].vxlan.remote: 2001:db8::2 is IPv6, but local 192.0.2.1 is IPv4`}},
		{"vni twice on a port", `"interfaces": [` + eth0 + `,
			{"name": "vx1", "type": "vxlan", "vxlan": {"vni": 100, "local": "192.0.2.1", "remote": "192.0.2.2"}},
			{"name": "vx2", "type": "vxlan", "vxlan": {"vni": 100, "local": "192.0.2.1", "remote": "192.0.2.3", "port": 4789}},
			{"name": "vx3", "type": "vxlan", "vxlan": {"vni": 100, "port": 8472}},
			{"name": "vx4", "type": "vxlan", "vxlan": {"vni": 100, "local": "2001:db8::1"}},
			{"name": "vx5", "type": "vxlan", "vxlan": {"vni": 100, "parent": "eth0"}},
			{"name": "vx6", "type": "vxlan", "vxlan": {"vni": 100, "group": "239.1.1.1", "parent": "eth0"}}]`,
			[]string{`interfaces[2].vxlan.vni: IPv4 VXLAN 100 on UDP port 4789 is already defined at interfaces[1].vxlan.vni`,
				`interfaces[6].vxlan.vni: IPv4 VXLAN 100 on UDP port 4789 over "eth0" is already defined at interfaces[5].vxlan.vni`}},
		{"port", `"interfaces": [{"name": "vx", "type": "vxlan", "vxlan": {"vni": 1, "port": 65536}}]`,
			[]string{`interfaces[0].vxlan.port: 65536 is out of range 0-65535`}},
	})
}

func TestValidateAddresses(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"bad CIDR", `"interfaces": [{"name": "a", "type": "physical", "addresses": ["192.0.2.10/33", "192.0.2.11", "x"]}]`,
			[]string{`interfaces[0].addresses[0]: "192.0.2.10/33" is not a valid CIDR address (like 192.0.2.10/24)`,
				`interfaces[0].addresses[1]: "192.0.2.11" is not a valid CIDR address (like 192.0.2.10/24)`,
				`interfaces[0].addresses[2]: "x" is not a valid CIDR address (like 192.0.2.10/24)`}},
		{"not unicast", `"interfaces": [{"name": "a", "type": "physical", "addresses": ["224.0.0.1/24", "127.0.0.2/8", "::/0"]}]`,
			[]string{`interfaces[0].addresses[0]: 224.0.0.1 is not a unicast address`,
				`interfaces[0].addresses[1]: 127.0.0.2 is not a unicast address`,
				`interfaces[0].addresses[2]: :: is not a unicast address`}},
		{"link-local is fine", `"interfaces": [{"name": "a", "type": "physical", "addresses": ["fe80::1/64", "169.254.0.1/16"]}]`, nil},
		{"duplicate across interfaces", `"interfaces": [
			{"name": "a", "type": "physical", "addresses": ["192.0.2.10/24", "2001:db8::1/64"]},
			{"name": "b", "type": "physical", "addresses": ["192.0.2.10/25", "2001:DB8::1/64"]}]`,
			[]string{`interfaces[1].addresses[0]: address 192.0.2.10 is already assigned at interfaces[0].addresses[0]`,
				`interfaces[1].addresses[1]: address 2001:db8::1 is already assigned at interfaces[0].addresses[1]`}},
		{"a host address on several interfaces (unnumbered links)", `"interfaces": [
			{"name": "a", "type": "physical", "addresses": ["192.0.2.10/32", "2001:db8::1/128"]},
			{"name": "b", "type": "physical", "addresses": ["192.0.2.10/32", "2001:db8::1/128"]},
			{"name": "c", "type": "physical", "addresses": ["192.0.2.10/32", "192.0.2.10/32"]}]`,
			[]string{`interfaces[2].addresses[1]: address 192.0.2.10 is already assigned at interfaces[2].addresses[0]`}},
		{"mapped", `"interfaces": [{"name": "a", "type": "physical", "addresses": ["::ffff:192.0.2.1/120"]}]`,
			[]string{`interfaces[0].addresses[0]: ::ffff:192.0.2.1/120 is an IPv4-mapped IPv6 address; write the IPv4 address`}},
		{"point-to-point peers", `"interfaces": [{"name": "a", "type": "physical", "addresses": [
			"10.9.0.1 peer 10.9.0.2/32", "2001:db8::1 peer 2001:db8::2/128", "10.8.0.1 peer 10.8.1.0/24"]}],
			"routes": [{"to": "198.51.100.0/24", "via": "10.9.0.2", "dev": "a"}]`, nil},
		{"bad peers", `"interfaces": [{"name": "a", "type": "physical", "addresses": [
			"10.9.0.1/32 peer 10.9.0.2/32", "10.9.0.3 peer 10.9.0.4", "10.9.0.5 peer 2001:db8::2/128",
			"10.9.0.6 peer 224.0.0.1/32", "10.9.0.7 peer 10.9.0.7/32"]}]`,
			[]string{`interfaces[0].addresses[0]: "10.9.0.1/32 peer 10.9.0.2/32" is not a valid point-to-point address (like 10.0.0.1 peer 10.0.0.2/32): the address before peer (without a length): ParseAddr("10.9.0.1/32"): unexpected character (at "/32")`,
				`interfaces[0].addresses[1]: "10.9.0.3 peer 10.9.0.4" is not a valid point-to-point address (like 10.0.0.1 peer 10.0.0.2/32): the peer (with a length): netip.ParsePrefix("10.9.0.4"): no '/'`,
				`interfaces[0].addresses[2]: "10.9.0.5 peer 2001:db8::2/128" is not a valid point-to-point address (like 10.0.0.1 peer 10.0.0.2/32): the address 10.9.0.5 and its peer 2001:db8::2 are of different families`,
				`interfaces[0].addresses[3]: peer 224.0.0.1 is not a unicast address`,
				`interfaces[0].addresses[4]: peer 10.9.0.7 is the address itself: write 10.9.0.7/32 without a peer`}},
	})
}

const eth0Doc = `"interfaces": [{"name": "eth0", "type": "physical", "addresses": ["192.0.2.10/24", "2001:db8::10/64"]}], `

func TestValidateRoutes(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"to missing", eth0Doc + `"routes": [{"dev": "eth0"}]`,
			[]string{`routes[0].to: is required ("default" or a CIDR prefix)`}},
		{"to bad", eth0Doc + `"routes": [{"to": "198.51.100.0", "dev": "eth0"}]`,
			[]string{`routes[0].to: "198.51.100.0" is not a CIDR prefix (like 198.51.100.0/24)`}},
		{"to with host bits", eth0Doc + `"routes": [{"to": "198.51.100.1/24", "dev": "eth0"}]`,
			[]string{`routes[0].to: 198.51.100.1/24 has host bits set (did you mean 198.51.100.0/24?)`}},
		{"IPv4 to, IPv6 via", eth0Doc + `"routes": [{"to": "198.51.100.0/24", "via": "2001:db8::1"}]`,
			[]string{`routes[0].via: 2001:db8::1 is IPv6, but to 198.51.100.0/24 is IPv4`}},
		{"family disagrees", eth0Doc + `"routes": [{"to": "default", "via": "192.0.2.1", "src": "2001:db8::10", "family": "ipv6"}]`,
			[]string{`routes[0].via: 192.0.2.1 is IPv4, but family is "ipv6"`}},
		{"src disagrees", eth0Doc + `"routes": [{"to": "default", "via": "192.0.2.1", "src": "2001:db8::10"}]`,
			[]string{`routes[0].src: 2001:db8::10 is IPv6, but via 192.0.2.1 is IPv4`}},
		{"blackhole with via and dev", eth0Doc + `"routes": [{"to": "203.0.113.0/24", "type": "blackhole", "via": "192.0.2.1", "dev": "eth0"}]`,
			[]string{`routes[0].via: not allowed for a blackhole route`, `routes[0].dev: not allowed for a blackhole route`}},
		{"unicast without via or dev", eth0Doc + `"routes": [{"to": "203.0.113.0/24"}]`,
			[]string{`routes[0]: a unicast route needs via or dev`}},
		{"family", eth0Doc + `"routes": [{"to": "203.0.113.0/24", "dev": "eth0", "family": "inet"}]`,
			[]string{`routes[0].family: "inet" is not one of ipv4, ipv6`}},
		{"type", eth0Doc + `"routes": [{"to": "203.0.113.0/24", "type": "drop"}]`,
			[]string{`routes[0].type: "drop" is not one of unicast, blackhole, unreachable, prohibit`}},
		{"dev undefined", eth0Doc + `"routes": [{"to": "203.0.113.0/24", "dev": "eth9"}]`,
			[]string{`routes[0].dev: interface "eth9" is not defined`}},
		{"reserved tables", eth0Doc + `"routes": [{"to": "203.0.113.0/24", "dev": "eth0", "table": 255}, {"to": "203.0.113.0/24", "dev": "eth0", "table": 253}]`,
			[]string{`routes[0].table: 255 is reserved for the kernel's local table`,
				`routes[1].table: 253 is reserved for the kernel's default table`}},
		{"via not unicast", eth0Doc + `"routes": [{"to": "default", "via": "0.0.0.0"}]`,
			[]string{`routes[0].via: 0.0.0.0 is not a unicast address`}},
		{"link-local via without dev", eth0Doc + `"routes": [{"to": "default", "via": "fe80::1"}]`,
			[]string{`routes[0].via: link-local gateway fe80::1 needs dev`}},
		{"host scope with via", eth0Doc + `"routes": [{"to": "default", "via": "192.0.2.1", "scope": "host"}]`,
			[]string{`routes[0].scope: "host" is not allowed with via`}},
		{"local IPv6 gateway", eth0Doc + `"routes": [{"to": "2001:db8:1::/48", "via": "2001:db8::10"}, {"to": "198.51.100.0/24", "via": "192.0.2.10"}]`,
			[]string{`routes[0].via: 2001:db8::10 is an address of "eth0" in the intent: the kernel refuses a local IPv6 gateway`}},
		{"link scope with an IPv4 via", eth0Doc + `"routes": [{"to": "198.51.100.0/24", "via": "192.0.2.1", "scope": "link"},
			{"to": "2001:db8:1::/48", "via": "2001:db8::1", "scope": "link"}, {"to": "203.0.113.0/24", "dev": "eth0", "scope": "link"}]`,
			[]string{`routes[0].scope: "link" is not allowed with an IPv4 via: the kernel refuses a gateway at link scope ("Nexthop has invalid gateway")`}},
		{"duplicate default", eth0Doc + `"routes": [
			{"to": "default", "via": "192.0.2.1", "metric": 100},
			{"to": "0.0.0.0/0", "dev": "eth0", "metric": 100, "table": 254},
			{"to": "default", "via": "2001:db8::1", "metric": 100}]`,
			[]string{`routes[1]: IPv4 route to default in table main, metric 100 is already defined at routes[0]`}},
		{"over a link declared down", `"interfaces": [
			{"name": "eth0", "type": "physical", "state": "down", "addresses": ["192.0.2.10/24", "2001:db8::10/64"]},
			{"name": "eth1", "type": "physical", "addresses": ["198.51.100.10/24"]},
			{"name": "eth2", "type": "physical", "state": "down", "addresses": ["198.51.100.20/24"]}],
			"routes": [
			{"to": "203.0.113.0/24", "dev": "eth0"},
			{"to": "default", "via": "192.0.2.1"},
			{"to": "2001:db8:1::/48", "via": "fe80::1", "dev": "eth0"},
			{"to": "203.0.114.0/24", "via": "198.51.100.1"},
			{"to": "203.0.115.0/24", "type": "blackhole"}]`,
			[]string{`routes[0].dev: "eth0" is declared "state": "down", and the kernel keeps no route over a link that is down`,
				`routes[1].via: 192.0.2.1 is reached only over "eth0", which is declared "state": "down", and the kernel keeps no route over a link that is down`,
				`routes[2].dev: "eth0" is declared "state": "down", and the kernel keeps no route over a link that is down`}},
		{"the kernel's own prefix routes", `"interfaces": [
			{"name": "eth0", "type": "physical", "addresses": ["192.0.2.10/24", "2001:db8::10/64", "198.51.100.7/32", "2001:db8:1::1/128"]}],
			"routes": [
			{"to": "192.0.2.0/24", "dev": "eth0"},
			{"to": "2001:db8::/64", "dev": "eth0", "metric": 256},
			{"to": "2001:db8::/64", "dev": "eth0"},
			{"to": "192.0.2.0/24", "dev": "eth0", "metric": 10},
			{"to": "192.0.2.0/24", "dev": "eth0", "table": 100},
			{"to": "198.51.100.7/32", "dev": "eth0"}]`,
			[]string{`routes[0]: the kernel adds this route itself for address 192.0.2.10/24 of "eth0" (table main, metric 0): leave it out, or give it another metric or table`,
				`routes[1]: the kernel adds this route itself for address 2001:db8::10/64 of "eth0" (table main, metric 256): leave it out, or give it another metric or table`}},
		{"IPv6 metric 0 is 1024", eth0Doc + `"routes": [
			{"to": "2001:db8:1::/48", "dev": "eth0"},
			{"to": "2001:db8:1::/48", "dev": "eth0", "metric": 1024}]`,
			[]string{`routes[1]: IPv6 route to 2001:db8:1::/48 in table main, metric 1024 is already defined at routes[0]`}},
		{"same prefix in other tables", eth0Doc + `"routes": [
			{"to": "198.51.100.0/24", "dev": "eth0"},
			{"to": "198.51.100.0/24", "dev": "eth0", "table": 100},
			{"to": "198.51.100.0/24", "dev": "eth0", "metric": 5}]`, nil},
	})
}

func TestValidateRules(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"priority", `"rules": [{"from": "10.0.0.0/8", "table": 100}]`,
			[]string{`rules[0].priority: is required (1-4294967295; 0 is the local table's rule)`}},
		{"family required", `"rules": [{"priority": 10, "fwmark": 1, "table": 100}]`,
			[]string{`rules[0].family: is required when neither from nor to is set (ipv4 or ipv6)`}},
		{"family given", `"rules": [{"priority": 10, "fwmark": 1, "table": 100, "family": "ipv6"}]`, nil},
		{"families disagree", `"rules": [{"priority": 10, "from": "10.0.0.0/8", "to": "2001:db8::/32", "table": 100}]`,
			[]string{`rules[0].to: 2001:db8::/32 is IPv6, but from 10.0.0.0/8 is IPv4`}},
		{"host bits", `"rules": [{"priority": 10, "from": "10.0.0.1/8", "table": 100}]`,
			[]string{`rules[0].from: 10.0.0.1/8 has host bits set (did you mean 10.0.0.0/8?)`}},
		{"fwmark outside fwmask", `"rules": [{"priority": 10, "fwmark": 3, "fwmask": 1, "table": 100, "family": "ipv4"}]`,
			[]string{`rules[0].fwmark: 0x3 has bits outside fwmask 0x1`}},
		{"table", `"rules": [{"priority": 10, "from": "10.0.0.0/8"}, {"priority": 11, "from": "10.0.0.0/8", "table": 255}]`,
			[]string{`rules[0].table: is required (1-4294967295)`, `rules[1].table: 255 is reserved for the kernel's local table`}},
		{"iif may be foreign, but must be a name", `"rules": [{"priority": 10, "iif": "wg0", "oif": "a b", "table": 100, "family": "ipv4"}]`,
			[]string{`rules[0].oif: "a b" contains ' ', which an interface name cannot`}},
		{"duplicate", `"rules": [
			{"priority": 10, "from": "10.0.0.0/8", "table": 100},
			{"priority": 10, "from": "10.0.0.0/8", "table": 200},
			{"priority": 10, "from": "10.0.0.0/8", "iif": "eth0", "table": 200}]`,
			[]string{`rules[1]: IPv4 rule at priority 10 from 10.0.0.0/8 to all is already defined at rules[0]`}},
		{"a /0 selector is none", `"rules": [
			{"priority": 10, "from": "0.0.0.0/0", "table": 100},
			{"priority": 10, "family": "ipv4", "to": "0.0.0.0/0", "table": 200}]`,
			[]string{`rules[1]: IPv4 rule at priority 10 from all to all is already defined at rules[0]`}},
	})
}

func TestValidateNeighbors(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"everything wrong", `"neighbors": [{"dev": "eth9", "ip": "192.0.2.300", "mac": "zz:00:00:00:00:00"}]`,
			[]string{`neighbors[0].dev: interface "eth9" is not defined`,
				`neighbors[0].ip: "192.0.2.300" is not a valid IP address`,
				`neighbors[0].mac: "zz:00:00:00:00:00" is not a MAC address (like 02:00:00:00:00:01)`}},
		{"missing", `"neighbors": [{}]`,
			[]string{`neighbors[0].dev: is required`, `neighbors[0].ip: is required`, `neighbors[0].mac: is required`}},
		{"zone", eth0Doc + `"neighbors": [{"dev": "eth0", "ip": "fe80::1%eth0", "mac": "02:00:00:00:00:01"}]`,
			[]string{`neighbors[0].ip: "fe80::1%eth0" has a zone, which is not allowed`}},
		{"duplicate", eth0Doc + `"neighbors": [
			{"dev": "eth0", "ip": "192.0.2.20", "mac": "02:00:00:00:00:01"},
			{"dev": "eth0", "ip": "192.0.2.20", "mac": "02:00:00:00:00:02"}]`,
			[]string{`neighbors[1]: neighbor 192.0.2.20 on "eth0" is already defined at neighbors[0]`}},
	})
}

func TestValidateSysctls(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"IPv6 on a link where it is disabled", `"interfaces": [
			{"name": "eth0", "type": "physical", "addresses": ["192.0.2.10/24", "2001:db8::10/64"]},
			{"name": "bond0.200", "type": "physical", "addresses": ["2001:db8:200::1/64"]},
			{"name": "br0", "type": "bridge", "addresses": ["2001:db8:1::1/64"]},
			{"name": "eth1", "type": "physical", "addresses": ["2001:db8:2::1/64"]}],
			"routes": [{"to": "2001:db8:5::/48", "dev": "eth0"}, {"to": "198.51.100.0/24", "dev": "eth0"}],
			"neighbors": [{"dev": "eth0", "ip": "2001:db8::1", "mac": "02:00:00:00:00:01"}, {"dev": "eth0", "ip": "192.0.2.1", "mac": "02:00:00:00:00:01"}],
			"sysctls": {"net.ipv6.conf.eth0.disable_ipv6": "1", "net.ipv6.conf.bond0.200.disable_ipv6": "1",
				"net.ipv6.conf.default.disable_ipv6": "1", "net.ipv6.conf.eth1.disable_ipv6": "0"}`,
			[]string{`interfaces[0].addresses[1]: 2001:db8::10/64 is IPv6, but sysctls["net.ipv6.conf.eth0.disable_ipv6"] disables IPv6 on "eth0"`,
				`interfaces[1].addresses[0]: 2001:db8:200::1/64 is IPv6, but sysctls["net.ipv6.conf.bond0.200.disable_ipv6"] disables IPv6 on "bond0.200"`,
				`interfaces[2].addresses[0]: 2001:db8:1::1/64 is IPv6, but sysctls["net.ipv6.conf.default.disable_ipv6"] disables IPv6 on "br0"`,
				`routes[0].dev: the route is IPv6, but sysctls["net.ipv6.conf.eth0.disable_ipv6"] disables IPv6 on "eth0"`,
				`neighbors[0].ip: 2001:db8::1 is IPv6, but sysctls["net.ipv6.conf.eth0.disable_ipv6"] disables IPv6 on "eth0"`}},
		{"IPv6 disabled everywhere", `"interfaces": [{"name": "eth0", "type": "physical", "addresses": ["2001:db8::10/64"]}],
			"sysctls": {"net.ipv6.conf.all.disable_ipv6": "1"}`,
			[]string{`interfaces[0].addresses[0]: 2001:db8::10/64 is IPv6, but sysctls["net.ipv6.conf.all.disable_ipv6"] disables IPv6 on "eth0"`}},
		{"not net", `"sysctls": {"kernel.panic": "1"}`,
			[]string{`sysctls["kernel.panic"]: only net.* keys are allowed`}},
		{"bad keys", `"sysctls": {"net..ipv4": "1", "net.ipv4/conf": "1", "net.ipv4.": "1", "net.a b": "1"}`,
			[]string{
				`sysctls["net..ipv4"]: not a valid key: want dot-separated names of letters, digits, '_' and '-'`,
				`sysctls["net.a b"]: not a valid key: want dot-separated names of letters, digits, '_' and '-'`,
				`sysctls["net.ipv4."]: not a valid key: want dot-separated names of letters, digits, '_' and '-'`,
				`sysctls["net.ipv4/conf"]: not a valid key: want dot-separated names of letters, digits, '_' and '-'`}},
		{"values", `"sysctls": {"net.ipv4.ip_forward": "", "net.core.somaxconn": "1\n2", "net.ipv4.tcp_rmem": "4096\t87380 6291456"}`,
			[]string{`sysctls["net.core.somaxconn"]: value contains a control character`,
				`sysctls["net.ipv4.ip_forward"]: value is empty`}},
	})
}

func TestValidateFirewall(t *testing.T) {
	chain := func(fields string) string { return `"firewall": {"chains": [` + fields + `]}` }
	runValidateCases(t, []validateCase{
		{"table", chain(`{"name": "X"}, {"table": "security", "name": "Y"}`),
			[]string{`firewall.chains[0].table: is required (one of filter, nat, mangle, raw)`,
				`firewall.chains[1].table: "security" is not one of filter, nat, mangle, raw`}},
		{"names", chain(`{"table": "filter"}, {"table": "filter", "name": "NETAGENT-A-VERY-LONG-CHAIN-NAME"},
			{"table": "filter", "name": "FORWARD"}, {"table": "filter", "name": "ACCEPT"},
			{"table": "filter", "name": "-X"}, {"table": "filter", "name": "A B"}`),
			[]string{`firewall.chains[0].name: is required`,
				`firewall.chains[1].name: "NETAGENT-A-VERY-LONG-CHAIN-NAME" is longer than 28 bytes`,
				`firewall.chains[2].name: "FORWARD" is the name of a built-in chain`,
				`firewall.chains[3].name: "ACCEPT" is the name of a built-in target`,
				`firewall.chains[4].name: "-X" cannot start with '-'`,
				`firewall.chains[5].name: "A B" contains a space or a character that is not printable ASCII`}},
		{"jumpFrom", chain(`{"table": "filter", "name": "A", "jumpFrom": "PREROUTING"}, {"table": "raw", "name": "B", "jumpFrom": "prerouting"}`),
			[]string{`firewall.chains[0].jumpFrom: "PREROUTING" is not a built-in chain of table filter (want INPUT, FORWARD, OUTPUT)`,
				`firewall.chains[1].jumpFrom: "prerouting" is not one of PREROUTING, INPUT, FORWARD, OUTPUT, POSTROUTING`}},
		{"position", chain(`{"table": "filter", "name": "A", "position": 2}, {"table": "filter", "name": "B", "jumpFrom": "INPUT", "position": -1}`),
			[]string{`firewall.chains[0].position: only allowed with jumpFrom`,
				`firewall.chains[1].position: -1 is out of range (1 or more)`}},
		{"family", chain(`{"table": "filter", "name": "A", "family": "inet"}`),
			[]string{`firewall.chains[0].family: "inet" is not one of ipv4, ipv6, both`}},
		{"duplicates", chain(`{"table": "filter", "name": "A", "family": "both"}, {"table": "filter", "name": "A", "family": "ipv6"},
			{"table": "nat", "name": "A"}, {"table": "filter", "name": "A"}`),
			[]string{`firewall.chains[1]: IPv6 chain "A" in table filter is already defined at firewall.chains[0]`,
				`firewall.chains[3]: IPv4 chain "A" in table filter is already defined at firewall.chains[0]`}},
		{"rules", chain(`{"table": "filter", "name": "A", "rules": ["-j ACCEPT", "-m comment --comment \"oops -j DROP", "", "-t nat -j DNAT", "-j X --append=Y", "-A OTHER -j DROP"]}`),
			[]string{`firewall.chains[0].rules[1]: unbalanced double quote at column 22`,
				`firewall.chains[0].rules[2]: is empty`,
				`firewall.chains[0].rules[3]: "-t" is not allowed in a rule: the agent chooses the table, chain and command`,
				`firewall.chains[0].rules[4]: "--append=Y" is not allowed in a rule: the agent chooses the table, chain and command`,
				`firewall.chains[0].rules[5]: "-A" is not allowed in a rule: the agent chooses the table, chain and command`,
				`firewall.chains[0].rules[3]: target DNAT is only valid in table nat, not filter`}},
		{"targets in the wrong table or hook", chain(`{"table": "filter", "name": "F", "rules": ["-p tcp --dport 80 -j DNAT --to-destination 192.0.2.1", "-j MARK --set-mark 1"]},
			{"table": "nat", "name": "PRE", "jumpFrom": "PREROUTING", "rules": ["-o eth0 -j MASQUERADE", "-p tcp -j REDIRECT --to-ports 3128", "-j CT --notrack"]},
			{"table": "nat", "name": "POST", "jumpFrom": "POSTROUTING", "rules": ["-j SNAT --to-source 192.0.2.1", "-j DNAT --to-destination 192.0.2.2"]},
			{"table": "nat", "name": "ANY", "rules": ["-j MASQUERADE", "-j DNAT --to-destination 192.0.2.3"]},
			{"table": "raw", "name": "R", "jumpFrom": "PREROUTING", "rules": ["-j CT --notrack", "-j NOTRACK"]}`),
			[]string{`firewall.chains[0].rules[0]: target DNAT is only valid in table nat, not filter`,
				`firewall.chains[1].rules[0]: target MASQUERADE is only valid from POSTROUTING, but the chain is jumped to from PREROUTING`,
				`firewall.chains[1].rules[2]: target CT is only valid in table raw, not nat`,
				`firewall.chains[2].rules[1]: target DNAT is only valid from PREROUTING, OUTPUT, but the chain is jumped to from POSTROUTING`}},
		{"rule families", chain(`{"table": "filter", "name": "A", "family": "both", "rules": ["-s 10.0.0.0/8 -j ACCEPT", "-d 2001:db8::/32,192.0.2.1 -j ACCEPT", "-j V4", "-s host.example -j ACCEPT", "-j B"]},
			{"table": "filter", "name": "V4", "rules": ["-d 2001:db8::1 -j DROP"]},
			{"table": "filter", "name": "B", "family": "both"},
			{"table": "nat", "name": "N", "family": "ipv6", "rules": ["-j DNAT --to-destination 192.0.2.1:80", "-j DNAT --to-destination [2001:db8::1]:80"]}`),
			[]string{`firewall.chains[0].rules[0]: -s 10.0.0.0/8 is IPv4, but the chain is for both families (family "both" writes every rule to iptables and ip6tables)`,
				`firewall.chains[0].rules[1]: -d 2001:db8::/32,192.0.2.1 is IPv6, but the chain is for both families (family "both" writes every rule to iptables and ip6tables)`,
				`firewall.chains[0].rules[2]: -j V4: chain "V4" of table filter is not defined for IPv6`,
				`firewall.chains[1].rules[0]: -d 2001:db8::1 is IPv6, but the chain is IPv4 only`,
				`firewall.chains[3].rules[0]: --to-destination 192.0.2.1:80 is IPv4, but the chain is IPv6 only`}},
	})
}

// TestValidateReportsEverything checks that one intent with a problem in
// every section gets all of them, in document order.
func TestValidateReportsEverything(t *testing.T) {
	in := mustParse(t, doc(`
		"interfaces": [
			{"name": "eth0", "type": "physical", "mtu": 20, "addresses": ["192.0.2.1/24"]},
			{"name": "eth0.5000", "type": "vlan", "vlan": {"parent": "eth0", "id": 5000}},
			{"name": "br0", "type": "bridge", "vlan": {"parent": "eth0", "id": 1}, "addresses": ["192.0.2.1/24"]},
			{"name": "m0", "type": "macvlan", "macvlan": {"parent": "eth7"}}
		],
		"routes": [{"to": "10.0.0.0/8", "via": "2001:db8::1"}, {"to": "10.1.0.0/16", "type": "prohibit", "dev": "eth0"}],
		"rules": [{"priority": 0, "from": "10.0.0.0/8", "table": 100}],
		"neighbors": [{"dev": "eth0", "ip": "192.0.2.9", "mac": "02:00:00:00:00:0g"}],
		"sysctls": {"kernel.sysrq": "1"},
		"firewall": {"chains": [{"table": "filter", "name": "INPUT", "rules": ["-j 'ACCEPT"]}]}`))
	checkMessages(t, in.Validate(), []string{
		`interfaces[0].mtu: 20 is out of range 68-65535`,
		`interfaces[1].vlan.id: 5000 is out of range 1-4094`,
		`interfaces[2].vlan: not allowed for type "bridge"`,
		`interfaces[2].addresses[0]: address 192.0.2.1 is already assigned at interfaces[0].addresses[0]`,
		`interfaces[3].macvlan.parent: interface "eth7" is not defined`,
		`routes[0].via: 2001:db8::1 is IPv6, but to 10.0.0.0/8 is IPv4`,
		`routes[1].dev: not allowed for a prohibit route`,
		`rules[0].priority: is required (1-4294967295; 0 is the local table's rule)`,
		`neighbors[0].mac: "02:00:00:00:00:0g" is not a MAC address (like 02:00:00:00:00:01)`,
		`sysctls["kernel.sysrq"]: only net.* keys are allowed`,
		`firewall.chains[0].name: "INPUT" is the name of a built-in chain`,
		`firewall.chains[0].rules[0]: unbalanced single quote at column 4`,
	})
}

// TestValidateSysctlAliases checks that two names of one kernel value in
// one intent are both rejected, naming each other, whatever their values:
// with both, the original saved for the second is the value netagent wrote
// for the first.
func TestValidateSysctlAliases(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"same value", `"sysctls": {"net.ipv4.ip_forward": "1", "net.ipv4.conf.all.forwarding": "1"}`,
			[]string{
				`sysctls["net.ipv4.conf.all.forwarding"]: is the same kernel value as net.ipv4.ip_forward (at sysctls["net.ipv4.ip_forward"]): set only one of them`,
				`sysctls["net.ipv4.ip_forward"]: is the same kernel value as net.ipv4.conf.all.forwarding (at sysctls["net.ipv4.conf.all.forwarding"]): set only one of them`}},
		{"contradictory", `"sysctls": {"net.ipv4.ip_forward": "0", "net.ipv4.conf.all.forwarding": "1"}`,
			[]string{
				`sysctls["net.ipv4.conf.all.forwarding"]: is the same kernel value as net.ipv4.ip_forward (at sysctls["net.ipv4.ip_forward"]): set only one of them`,
				`sysctls["net.ipv4.ip_forward"]: is the same kernel value as net.ipv4.conf.all.forwarding (at sysctls["net.ipv4.conf.all.forwarding"]): set only one of them`}},
		{"one name each family", `"sysctls": {"net.ipv4.ip_forward": "1", "net.ipv6.conf.all.forwarding": "1", "net.ipv4.conf.default.forwarding": "1"}`, nil},
	})
}

// TestMergeSysctlAliasesAcrossFiles checks that two files each setting one
// name of the same kernel value are rejected on both, with the file of the
// other name.
func TestMergeSysctlAliasesAcrossFiles(t *testing.T) {
	merged, err := Merge(parseFiles(t, map[string]string{
		"a.json": doc(`"sysctls": {"net.ipv4.ip_forward": "1"}`),
		"b.json": doc(`"sysctls": {"net.ipv4.conf.all.forwarding": "0"}`),
	}))
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	checkMessages(t, merged.Validate(), []string{
		`b.json: sysctls["net.ipv4.conf.all.forwarding"]: is the same kernel value as net.ipv4.ip_forward (at sysctls["net.ipv4.ip_forward"] in a.json): set only one of them`,
		`a.json: sysctls["net.ipv4.ip_forward"]: is the same kernel value as net.ipv4.conf.all.forwarding (at sysctls["net.ipv4.conf.all.forwarding"] in b.json): set only one of them`,
	})
}

// TestValidateJumpPositions: netagent's jumps from one built-in chain are
// one block ordered by position, so two chains there (in a family they
// share) cannot both ask for one explicit position; each is reported
// naming the other. Absent positions tie and are ordered by name.
func TestValidateJumpPositions(t *testing.T) {
	chain := func(fields string) string { return `"firewall": {"chains": [` + fields + `]}` }
	runValidateCases(t, []validateCase{
		{"same position", chain(`{"table": "filter", "name": "A", "jumpFrom": "FORWARD", "position": 2},
			{"table": "filter", "name": "B", "jumpFrom": "FORWARD", "family": "both", "position": 2},
			{"table": "filter", "name": "C", "jumpFrom": "FORWARD", "family": "ipv6", "position": 2}`),
			[]string{
				`firewall.chains[0].position: position 2 of the jumps from FORWARD in table filter is also claimed at firewall.chains[1].position: the jumps from one built-in chain are one block ordered by position, so positions must differ`,
				`firewall.chains[1].position: position 2 of the jumps from FORWARD in table filter is also claimed at firewall.chains[0].position and firewall.chains[2].position: the jumps from one built-in chain are one block ordered by position, so positions must differ`,
				`firewall.chains[2].position: position 2 of the jumps from FORWARD in table filter is also claimed at firewall.chains[1].position: the jumps from one built-in chain are one block ordered by position, so positions must differ`}},
		{"no conflict", chain(`{"table": "filter", "name": "A", "jumpFrom": "FORWARD"},
			{"table": "filter", "name": "B", "jumpFrom": "FORWARD"},
			{"table": "filter", "name": "C", "jumpFrom": "FORWARD", "position": 1},
			{"table": "filter", "name": "D", "jumpFrom": "INPUT", "position": 1},
			{"table": "nat", "name": "E", "jumpFrom": "OUTPUT", "position": 1},
			{"table": "filter", "name": "F", "jumpFrom": "FORWARD", "family": "ipv6", "position": 1}`), nil},
	})
}

// TestMergeJumpPositionsAcrossFiles: the clash is found in the merged
// intent and names both files.
func TestMergeJumpPositionsAcrossFiles(t *testing.T) {
	merged, err := Merge(parseFiles(t, map[string]string{
		"a.json": doc(`"firewall": {"chains": [{"table": "filter", "name": "A", "jumpFrom": "FORWARD", "position": 3}]}`),
		"b.json": doc(`"firewall": {"chains": [{"table": "filter", "name": "B", "jumpFrom": "FORWARD", "position": 3}]}`),
	}))
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	checkMessages(t, merged.Validate(), []string{
		`a.json: firewall.chains[0].position: position 3 of the jumps from FORWARD in table filter is also claimed at firewall.chains[0].position in b.json: the jumps from one built-in chain are one block ordered by position, so positions must differ`,
		`b.json: firewall.chains[0].position: position 3 of the jumps from FORWARD in table filter is also claimed at firewall.chains[0].position in a.json: the jumps from one built-in chain are one block ordered by position, so positions must differ`,
	})
}

// TestValidateDummy: a dummy has no section and takes the common fields
// (mtu, mac, alias, state, master, addresses); it is neither a master nor a
// parent of anything that needs an Ethernet one, and another type's
// section is refused on it.
func TestValidateDummy(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"valid", `"interfaces": [{"name": "br0", "type": "bridge"},
			{"name": "dm0", "type": "dummy", "mtu": 9000, "mac": "02:00:00:00:00:01", "alias": "svc", "state": "down",
			 "master": "br0", "addresses": ["192.0.2.1/32", "2001:db8::1/128"]},
			{"name": "dm1", "type": "dummy"}, {"name": "v1", "type": "vlan", "vlan": {"parent": "dm1", "id": 7}}]`, nil},
		{"another type's section", `"interfaces": [{"name": "dm0", "type": "dummy", "bond": {"mode": "802.3ad"}, "vlan": {"parent": "eth0", "id": 1}}]`,
			[]string{`interfaces[0].bond: not allowed for type "dummy"`, `interfaces[0].vlan: not allowed for type "dummy"`}},
		{"not a master", `"interfaces": [{"name": "dm0", "type": "dummy"}, {"name": "dm1", "type": "dummy", "master": "dm0"}]`,
			[]string{`interfaces[1].master: "dm0" is a dummy interface, not a bond, bridge or vrf`}},
		{"bad mac", `"interfaces": [{"name": "dm0", "type": "dummy", "mac": "01:00:00:00:00:01"}]`,
			[]string{`interfaces[0].mac: 01:00:00:00:00:01 is a multicast MAC address`}},
	})
	if _, err := Parse([]byte(doc(`"interfaces": [{"name": "dm0", "type": "dummy", "dummy": {}}]`))); err == nil {
		t.Error(`a "dummy" section parses`)
	}
}

const twoLinkDoc = `"interfaces": [{"name": "eth0", "type": "physical", "addresses": ["192.0.2.10/24", "2001:db8::10/64"]},
	{"name": "eth1", "type": "physical", "addresses": ["198.51.100.10/24"]}], `

func TestValidateRouteNexthops(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"ecmp", twoLinkDoc + `"routes": [{"to": "10.200.0.0/16", "nexthops": [{"via": "192.0.2.2", "dev": "eth0", "weight": 1},
			{"via": "198.51.100.2", "dev": "eth1", "weight": 3}, {"dev": "eth1"}], "mtu": 1400}]`, nil},
		{"ipv6 ecmp with pref", twoLinkDoc + `"routes": [{"to": "2001:db8:9::/48", "pref": "high", "nexthops": [{"via": "2001:db8::1"}, {"via": "fe80::1", "dev": "eth1", "onlink": true}]}]`, nil},
		{"with via, dev and onlink", twoLinkDoc + `"routes": [{"to": "10.200.0.0/16", "via": "192.0.2.2", "dev": "eth0", "onlink": true,
			"nexthops": [{"via": "192.0.2.2"}, {"via": "198.51.100.2"}]}]`,
			[]string{`routes[0].via: not allowed with nexthops (give it per nexthop)`, `routes[0].dev: not allowed with nexthops (give it per nexthop)`,
				`routes[0].onlink: not allowed with nexthops (give it per nexthop)`}},
		{"one nexthop", twoLinkDoc + `"routes": [{"to": "10.200.0.0/16", "nexthops": [{"via": "192.0.2.2"}]}]`,
			[]string{`routes[0].nexthops: needs at least two nexthops (one is a plain route: use via and dev)`}},
		{"bad nexthops", twoLinkDoc + `"routes": [{"to": "10.200.0.0/16", "nexthops": [{}, {"via": "2001:db8::1", "weight": 257},
			{"dev": "eth9", "onlink": true}, {"via": "192.0.2.2"}, {"via": "192.0.2.2"}]}]`,
			[]string{`routes[0].nexthops[0]: needs via or dev`, `routes[0].nexthops[1].weight: 257 is out of range (1-256)`,
				`routes[0].nexthops[2].dev: interface "eth9" is not defined`, `routes[0].nexthops[2].onlink: needs via and dev`,
				`routes[0].nexthops[4]: the same nexthop as routes[0].nexthops[3]`,
				`routes[0].nexthops[1].via: 2001:db8::1 is IPv6, but to 10.200.0.0/16 is IPv4`}},
		{"ipv6 nexthop without via", twoLinkDoc + `"routes": [{"to": "2001:db8:9::/48", "nexthops": [{"via": "2001:db8::1"}, {"dev": "eth1"}]}]`,
			[]string{`routes[0].nexthops[1].via: is required in an IPv6 multipath route`}},
		{"blackhole with nexthops", twoLinkDoc + `"routes": [{"to": "10.200.0.0/16", "type": "blackhole", "nexthops": [{"via": "192.0.2.2"}, {"via": "198.51.100.2"}]}]`,
			[]string{`routes[0].nexthops: not allowed for a blackhole route`}},
		{"onlink needs via and dev", twoLinkDoc + `"routes": [{"to": "10.200.0.0/16", "via": "192.0.2.2", "onlink": true}]`,
			[]string{`routes[0].onlink: needs via and dev`}},
		{"pref on ipv4, bad pref, mtu", twoLinkDoc + `"routes": [{"to": "10.200.0.0/16", "dev": "eth0", "pref": "high", "mtu": 60},
			{"to": "2001:db8:9::/48", "dev": "eth0", "pref": "top", "mtu": 1200}]`,
			[]string{`routes[0].mtu: 60 is out of range (68-65535 for IPv4)`,
				`routes[0].pref: is for IPv6 routes only (the kernel keeps no preference on IPv4 routes)`, `routes[1].pref: "top" is not one of low, medium, high`,
				`routes[1].mtu: 1200 is out of range (1280-65535 for IPv6)`}},
		{"ecmp twice is one route", twoLinkDoc + `"routes": [{"to": "10.200.0.0/16", "nexthops": [{"via": "192.0.2.2"}, {"via": "198.51.100.2"}]},
			{"to": "10.200.0.0/16", "via": "192.0.2.3"}]`,
			[]string{`routes[1]: IPv4 route to 10.200.0.0/16 in table main, metric 0 is already defined at routes[0]`}},
	})
}

func TestValidateRuleSelectorsAndActions(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"every selector", `"rules": [{"priority": 10, "not": true, "from": "10.0.0.0/8", "ipproto": "tcp", "sport": "1000-2000", "dport": "443",
			"uidrange": "1000-1999", "suppressPrefixlength": 0, "table": 100},
			{"priority": 11, "family": "ipv6", "ipproto": "58", "action": "unreachable"},
			{"priority": 12, "family": "ipv4", "action": "goto", "goto": 20}, {"priority": 20, "family": "ipv4", "action": "prohibit"},
			{"priority": 21, "family": "ipv4", "action": "blackhole", "uidrange": "0"}]`, nil},
		{"bad selectors", `"rules": [{"priority": 10, "family": "ipv4", "ipproto": "tcpx", "sport": "2000-1000", "dport": "70000",
			"uidrange": "a-b", "suppressPrefixlength": 33, "table": 100}]`,
			[]string{`rules[0].ipproto: "tcpx" is not a protocol (a name: tcp, udp, sctp, dccp, icmp, ipv6-icmp, gre, esp, ah; or a number 1-255)`,
				`rules[0].sport: "2000-1000": the range ends before it starts`, `rules[0].dport: "70000": out of range (1-65535)`,
				`rules[0].uidrange: "a-b": want a number or a range N-M of numbers 0-4294967294`,
				`rules[0].suppressPrefixlength: 33 is out of range (0-32 for IPv4)`}},
		{"ports of icmp", `"rules": [{"priority": 10, "family": "ipv4", "ipproto": "icmp", "dport": "80", "table": 100}]`,
			[]string{`rules[0].dport: ipproto icmp has no ports (tcp, udp, sctp or dccp have)`}},
		{"actions and what they take", `"rules": [{"priority": 10, "family": "ipv4", "action": "blackhole", "table": 100, "suppressPrefixlength": 0},
			{"priority": 11, "family": "ipv4", "action": "goto"}, {"priority": 12, "family": "ipv4", "table": 100, "goto": 20},
			{"priority": 13, "family": "ipv4", "action": "jump"}]`,
			[]string{`rules[0].table: not allowed with action "blackhole" (only lookup takes a table)`,
				`rules[0].suppressPrefixlength: needs action "lookup"`,
				`rules[1].goto: is required with action "goto" (the priority of a later rule)`, `rules[2].goto: needs action "goto"`,
				`rules[3].action: "jump" is not one of lookup, goto, blackhole, unreachable, prohibit`}},
		{"goto targets", `"rules": [{"priority": 10, "family": "ipv4", "action": "goto", "goto": 5}, {"priority": 5, "family": "ipv4", "table": 100},
			{"priority": 11, "family": "ipv4", "action": "goto", "goto": 30}, {"priority": 12, "family": "ipv4", "action": "goto", "goto": 40},
			{"priority": 40, "family": "ipv6", "table": 100}]`,
			[]string{`rules[0].goto: 5 is not after this rule's priority 10 (a goto jumps forward)`,
				`rules[2].goto: no IPv4 rule of the intent has priority 30`, `rules[3].goto: no IPv4 rule of the intent has priority 40`}},
		{"selectors are identity", `"rules": [{"priority": 10, "family": "ipv4", "dport": "80", "table": 100},
			{"priority": 10, "family": "ipv4", "dport": "80-80", "action": "blackhole"},
			{"priority": 10, "family": "ipv4", "dport": "81", "table": 100}, {"priority": 10, "family": "ipv4", "not": true, "dport": "80", "table": 100}]`,
			[]string{`rules[1]: IPv4 rule at priority 10 from all to all dport 80-80 is already defined at rules[0]`}},
	})
}

// TestValidateIpvlan: an ipvlan needs an Ethernet parent of the intent
// that is not itself, lo, another ipvlan, a bond or bridge port or a
// macvlan parent; its parent's ipvlans agree on mode and flag; it has no
// MAC of its own, is no bond or bridge port and carries no VLAN or
// macvlan; its MTU is not above its parent's.
func TestValidateIpvlan(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"valid", `"interfaces": [{"name": "eth0", "type": "physical", "mtu": 9000},
			{"name": "iv0", "type": "ipvlan", "mtu": 9000, "alias": "pod", "addresses": ["192.0.2.1/24"], "ipvlan": {"parent": "eth0", "mode": "l2", "flag": "private"}},
			{"name": "iv1", "type": "ipvlan", "ipvlan": {"parent": "eth0", "mode": "l2", "flag": "private"}},
			{"name": "eth1", "type": "physical"},
			{"name": "iv2", "type": "ipvlan", "ipvlan": {"parent": "eth1"}}, {"name": "iv3", "type": "ipvlan", "ipvlan": {"parent": "eth1", "mode": "l3", "flag": "bridge"}},
			{"name": "vx0", "type": "vxlan", "vxlan": {"vni": 5, "parent": "iv2"}}]`, nil},
		{"section missing", `"interfaces": [{"name": "iv0", "type": "ipvlan"}]`,
			[]string{`interfaces[0].ipvlan: is required for type "ipvlan"`}},
		{"parent", `"interfaces": [{"name": "iv0", "type": "ipvlan", "ipvlan": {"parent": ""}},
			{"name": "iv1", "type": "ipvlan", "ipvlan": {"parent": "iv1"}},
			{"name": "iv2", "type": "ipvlan", "ipvlan": {"parent": "nope"}},
			{"name": "lo", "type": "physical"}, {"name": "iv3", "type": "ipvlan", "ipvlan": {"parent": "lo"}}]`,
			[]string{`interfaces[0].ipvlan.parent: is required`,
				`interfaces[1].ipvlan.parent: interface "iv1" cannot be its own parent`,
				`interfaces[2].ipvlan.parent: interface "nope" is not defined`,
				`interfaces[4].ipvlan.parent: the loopback interface cannot be the parent of an ipvlan (the kernel refuses it)`}},
		{"enums", `"interfaces": [{"name": "eth0", "type": "physical"}, {"name": "iv0", "type": "ipvlan", "ipvlan": {"parent": "eth0", "mode": "l4", "flag": "open"}}]`,
			[]string{`interfaces[1].ipvlan.mode: "l4" is not one of l2, l3, l3s`, `interfaces[1].ipvlan.flag: "open" is not one of bridge, private, vepa`}},
		{"modes differ on one parent", `"interfaces": [{"name": "eth0", "type": "physical"},
			{"name": "iv0", "type": "ipvlan", "ipvlan": {"parent": "eth0", "mode": "l2"}},
			{"name": "iv1", "type": "ipvlan", "ipvlan": {"parent": "eth0"}}]`,
			[]string{`interfaces[1].ipvlan.mode: mode l2 flag bridge differs from ipvlan "iv1" at interfaces[2].ipvlan (mode l3 flag bridge): the kernel keeps one mode and flag for all the ipvlans of parent "eth0"`,
				`interfaces[2].ipvlan.mode: mode l3 flag bridge differs from ipvlan "iv0" at interfaces[1].ipvlan (mode l2 flag bridge): the kernel keeps one mode and flag for all the ipvlans of parent "eth0"`}},
		{"flags differ on one parent", `"interfaces": [{"name": "eth0", "type": "physical"},
			{"name": "iv0", "type": "ipvlan", "ipvlan": {"parent": "eth0", "flag": "bridge"}},
			{"name": "iv1", "type": "ipvlan", "ipvlan": {"parent": "eth0", "flag": "vepa"}}]`,
			[]string{`interfaces[1].ipvlan.mode: mode l3 flag bridge differs from ipvlan "iv1" at interfaces[2].ipvlan (mode l3 flag vepa): the kernel keeps one mode and flag for all the ipvlans of parent "eth0"`,
				`interfaces[2].ipvlan.mode: mode l3 flag vepa differs from ipvlan "iv0" at interfaces[1].ipvlan (mode l3 flag bridge): the kernel keeps one mode and flag for all the ipvlans of parent "eth0"`}},
		{"macvlan and ipvlan on one parent", `"interfaces": [{"name": "eth0", "type": "physical"},
			{"name": "mv0", "type": "macvlan", "macvlan": {"parent": "eth0"}},
			{"name": "iv0", "type": "ipvlan", "ipvlan": {"parent": "eth0"}}]`,
			[]string{`interfaces[2].ipvlan.parent: "eth0" is also the parent of macvlan "mv0" at interfaces[1].macvlan.parent: the kernel lets a link carry macvlans or ipvlans, not both`}},
		{"parent an ipvlan or a port", `"interfaces": [{"name": "eth0", "type": "physical"}, {"name": "br0", "type": "bridge"},
			{"name": "eth1", "type": "physical", "master": "br0"},
			{"name": "iv0", "type": "ipvlan", "ipvlan": {"parent": "eth0"}},
			{"name": "iv1", "type": "ipvlan", "ipvlan": {"parent": "iv0"}},
			{"name": "iv2", "type": "ipvlan", "ipvlan": {"parent": "eth1"}}]`,
			[]string{`interfaces[4].ipvlan.parent: "iv0" is an ipvlan: the kernel puts an ipvlan on an ipvlan on that one's parent; name "iv0"'s parent`,
				`interfaces[5].ipvlan.parent: "eth1" is a port of "br0": the kernel lets a link be a bond or bridge port or the parent of macvlans, not both`}},
		{"mac, port, children", `"interfaces": [{"name": "eth0", "type": "physical"}, {"name": "br0", "type": "bridge"},
			{"name": "iv0", "type": "ipvlan", "mac": "02:00:00:00:00:01", "master": "br0", "ipvlan": {"parent": "eth0"}},
			{"name": "v7", "type": "vlan", "vlan": {"parent": "iv0", "id": 7}},
			{"name": "mv0", "type": "macvlan", "macvlan": {"parent": "iv0"}}]`,
			[]string{`interfaces[2].mac: an ipvlan has the MAC address of its parent and cannot change it`,
				`interfaces[2].master: ipvlan "iv0" cannot be a port of bridge "br0": an ipvlan takes no receive handler, which a bond or bridge port needs`,
				`interfaces[3].vlan.parent: "iv0" is an ipvlan, which cannot carry VLANs (the kernel marks it VLAN-challenged)`,
				`interfaces[4].macvlan.parent: "iv0" is an ipvlan, which cannot carry macvlans (it takes no receive handler)`,
				`interfaces[4].macvlan.parent: "iv0" is a port of "br0": the kernel lets a link be a bond or bridge port or the parent of macvlans, not both`}},
		{"mtu above the parent's", `"interfaces": [{"name": "eth0", "type": "physical", "mtu": 1500},
			{"name": "iv0", "type": "ipvlan", "mtu": 9000, "ipvlan": {"parent": "eth0"}}]`,
			[]string{`interfaces[1].mtu: 9000 is above 1500, the mtu of its parent "eth0"`}},
	})
}

// TestValidateVRF: a vrf needs a table of its own (not 0, 253, 254, 255,
// nor another vrf's: both paths named); it is a master for any interface
// but another vrf and lo, and no bond or bridge port itself; its mtu is
// 1280 or more.
func TestValidateVRF(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"valid", `"interfaces": [{"name": "blue", "type": "vrf", "mtu": 9000, "mac": "02:00:00:00:00:01", "addresses": ["10.0.0.1/32"], "vrf": {"table": 10}},
			{"name": "green", "type": "vrf", "vrf": {"table": 4294967295}},
			{"name": "eth0", "type": "physical", "master": "blue", "addresses": ["192.0.2.1/24", "2001:db8::1/64"]},
			{"name": "br0", "type": "bridge", "master": "blue"}, {"name": "bond0", "type": "bond", "master": "green"},
			{"name": "eth1", "type": "physical"}, {"name": "iv0", "type": "ipvlan", "master": "green", "ipvlan": {"parent": "eth1"}},
			{"name": "eth1.7", "type": "vlan", "master": "blue", "vlan": {"parent": "eth1", "id": 7}}]`, nil},
		{"section missing", `"interfaces": [{"name": "blue", "type": "vrf"}]`,
			[]string{`interfaces[0].vrf: is required for type "vrf"`}},
		{"reserved tables", `"interfaces": [{"name": "a", "type": "vrf", "vrf": {"table": 0}}, {"name": "b", "type": "vrf", "vrf": {"table": 253}},
			{"name": "c", "type": "vrf", "vrf": {"table": 254}}, {"name": "d", "type": "vrf", "vrf": {"table": 255}}]`,
			[]string{`interfaces[0].vrf.table: 0 is the unspec table; a vrf needs a table of its own (1-252, 256-4294967295)`,
				`interfaces[1].vrf.table: 253 is the default table; a vrf needs a table of its own (1-252, 256-4294967295)`,
				`interfaces[2].vrf.table: 254 is the main table; a vrf needs a table of its own (1-252, 256-4294967295)`,
				`interfaces[3].vrf.table: 255 is the local table; a vrf needs a table of its own (1-252, 256-4294967295)`}},
		{"one table, two vrfs", `"interfaces": [{"name": "blue", "type": "vrf", "vrf": {"table": 10}}, {"name": "red", "type": "vrf", "vrf": {"table": 10}}]`,
			[]string{`interfaces[1].vrf.table: vrf table 10 is already defined at interfaces[0].vrf.table`}},
		{"what cannot be a port", `"interfaces": [{"name": "blue", "type": "vrf", "vrf": {"table": 10}},
			{"name": "red", "type": "vrf", "master": "blue", "vrf": {"table": 20}},
			{"name": "lo", "type": "physical", "master": "blue"},
			{"name": "br0", "type": "bridge"}, {"name": "green", "type": "vrf", "master": "br0", "vrf": {"table": 30}},
			{"name": "bond0", "type": "bond"}, {"name": "white", "type": "vrf", "master": "bond0", "vrf": {"table": 40}}]`,
			[]string{`interfaces[1].master: vrf "red" cannot be a port of vrf "blue" (the kernel enslaves no L3 master device to a vrf)`,
				`interfaces[2].master: the loopback interface cannot be a port of vrf "blue" (the kernel refuses it: the vrf is its ports' loopback)`,
				`interfaces[4].master: vrf "green" cannot be a port of bridge "br0": a vrf takes no receive handler, which a bond or bridge port needs`,
				`interfaces[6].master: vrf "white" cannot be a port of bond "bond0": a vrf takes no receive handler, which a bond or bridge port needs`}},
		{"mtu", `"interfaces": [{"name": "blue", "type": "vrf", "mtu": 1000, "vrf": {"table": 10}},
			{"name": "red", "type": "vrf", "mtu": 65576, "vrf": {"table": 20}}, {"name": "green", "type": "vrf", "mtu": 65575, "vrf": {"table": 30}},
			{"name": "dm0", "type": "dummy", "mtu": 65575}]`,
			[]string{`interfaces[0].mtu: 1000 is below 1280, the least mtu of a vrf`, `interfaces[1].mtu: 65576 is out of range 68-65575`,
				`interfaces[3].mtu: 65575 is out of range 68-65535`}},
		{"nothing Ethernet on a vrf", `"interfaces": [{"name": "blue", "type": "vrf", "vrf": {"table": 10}},
			{"name": "v7", "type": "vlan", "vlan": {"parent": "blue", "id": 7}},
			{"name": "mv0", "type": "macvlan", "macvlan": {"parent": "blue"}},
			{"name": "iv0", "type": "ipvlan", "ipvlan": {"parent": "blue"}},
			{"name": "vx0", "type": "vxlan", "vxlan": {"vni": 9, "parent": "blue"}}]`,
			[]string{`interfaces[1].vlan.parent: "blue" is a vrf, which cannot carry VLANs (the kernel marks it VLAN-challenged)`,
				`interfaces[2].macvlan.parent: "blue" is a vrf, which cannot carry macvlans (it takes no receive handler)`,
				`interfaces[3].ipvlan.parent: "blue" is a vrf, which cannot carry ipvlans (it takes no receive handler)`,
				`interfaces[3].ipvlan.parent: "blue" is also the parent of macvlan "mv0" at interfaces[2].macvlan.parent: the kernel lets a link carry macvlans or ipvlans, not both`}},
	})
}

// ParseAddress and FormatAddress agree, with a peer and without.
func TestParseAddressRoundTrip(t *testing.T) {
	for _, s := range []string{"192.0.2.10/24", "10.9.0.1 peer 10.9.0.2/32", "2001:db8::1 peer 2001:db8::2/128", "10.8.0.1 peer 10.8.1.0/24"} {
		p, peer, err := ParseAddress(s)
		if err != nil {
			t.Errorf("%q: %v", s, err)
			continue
		}
		if got := FormatAddress(p, peer); got != s {
			t.Errorf("%q reads as %v peer %v and writes as %q", s, p, peer, got)
		}
	}
	if p, peer, _ := ParseAddress("10.9.0.1 peer 10.9.0.2/30"); p.String() != "10.9.0.1/30" || peer.String() != "10.9.0.2" {
		t.Errorf("the length is the peer's, on the address: %v peer %v", p, peer)
	}
}
