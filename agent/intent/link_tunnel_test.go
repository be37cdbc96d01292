package intent

import "testing"

// TestValidateTunnels: the four tunnel types' endpoints (unicast, IPv4 for
// gre, ipip and sit, IPv6 for ip6tnl), options of other types, the
// fallback devices' names and identity, and two tunnels of one identity
// (refused by the kernel with EEXIST), each with its JSON path.
func TestValidateTunnels(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"valid", `"interfaces": [{"name": "eth0", "type": "physical", "mtu": 9000},
			{"name": "gre1", "type": "gre", "gre": {"local": "192.0.2.1", "remote": "198.51.100.2", "ttl": 64, "key": 42, "parent": "eth0"}, "mtu": 1400},
			{"name": "eth1", "type": "physical", "mtu": 1500},
			{"name": "gre4", "type": "gre", "gre": {"local": "192.0.2.4", "parent": "eth1"}, "mtu": 9000},
			{"name": "gre2", "type": "gre", "gre": {"local": "192.0.2.1", "remote": "198.51.100.2", "key": 43}},
			{"name": "gre3", "type": "gre", "gre": {"remote": "198.51.100.2", "ikey": 1, "okey": 2, "pmtudisc": false}},
			{"name": "ipip1", "type": "ipip", "ipip": {"local": "192.0.2.1", "remote": "198.51.100.2"}, "addresses": ["10.0.0.1/30"]},
			{"name": "sit1", "type": "sit", "sit": {"remote": "198.51.100.2", "ttl": 255}, "addresses": ["2001:db8:1::1/64"]},
			{"name": "ip6t1", "type": "ip6tnl", "ip6tnl": {"local": "2001:db8::1", "remote": "2001:db8::2", "mode": "ipip6", "encapLimit": 0, "hopLimit": 0}},
			{"name": "ip6t2", "type": "ip6tnl", "ip6tnl": {"parent": "eth0"}},
			{"name": "tunl0", "type": "physical", "mtu": 1480}]`, nil},
		{"family", `"interfaces": [{"name": "gre1", "type": "gre", "gre": {"local": "2001:db8::1", "remote": "198.51.100.2"}},
			{"name": "ip6t1", "type": "ip6tnl", "ip6tnl": {"remote": "192.0.2.1"}}]`,
			[]string{`interfaces[0].gre.local: 2001:db8::1 is IPv6, but a gre tunnel's endpoints are IPv4`,
				`interfaces[1].ip6tnl.remote: 192.0.2.1 is IPv4, but a ip6tnl tunnel's endpoints are IPv6`}},
		{"not unicast", `"interfaces": [{"name": "ipip1", "type": "ipip", "ipip": {"local": "192.0.2.1", "remote": "224.0.0.1"}}]`,
			[]string{`interfaces[0].ipip.remote: 224.0.0.1 is not a unicast address`}},
		{"keys", `"interfaces": [{"name": "ipip1", "type": "ipip", "ipip": {"local": "192.0.2.1", "key": 1}},
			{"name": "gre1", "type": "gre", "gre": {"local": "192.0.2.1", "key": 1, "okey": 2}}]`,
			[]string{`interfaces[0].ipip.key: only a gre tunnel has keys`, `interfaces[1].gre.okey: not allowed together with key`}},
		{"pmtudisc off with a ttl", `"interfaces": [{"name": "sit1", "type": "sit", "sit": {"local": "192.0.2.1", "ttl": 64, "pmtudisc": false}}]`,
			[]string{`interfaces[0].sit.pmtudisc: false needs ttl 0 (inherit): the kernel sets DF on a tunnel with a fixed ttl`}},
		{"ranges and mode", `"interfaces": [{"name": "ip6t1", "type": "ip6tnl", "ip6tnl": {"local": "2001:db8::1", "hopLimit": 256, "encapLimit": -1, "mode": "gre"}}]`,
			[]string{`interfaces[0].ip6tnl.hopLimit: 256 is out of range 0-255`, `interfaces[0].ip6tnl.encapLimit: -1 is out of range 0-255`,
				`interfaces[0].ip6tnl.mode: "gre" is not one of ip6ip6, ipip6, any`}},
		{"no mac", `"interfaces": [{"name": "gre1", "type": "gre", "mac": "02:00:00:00:00:01", "gre": {"local": "192.0.2.1"}}]`,
			[]string{`interfaces[0].mac: a gre tunnel has no MAC address`}},
		{"fallback names", `"interfaces": [{"name": "gre0", "type": "gre", "gre": {"local": "192.0.2.1"}},
			{"name": "ip6tnl0", "type": "dummy"}]`,
			[]string{`interfaces[0].name: "gre0" is the name of the device the kernel's tunnel module creates (and owns) when it loads; choose another`,
				`interfaces[1].name: "ip6tnl0" is the name of the device the kernel's tunnel module creates (and owns) when it loads; choose another`}},
		{"fallback identity", `"interfaces": [{"name": "sit1", "type": "sit", "sit": {"ttl": 64}}]`,
			[]string{`interfaces[0].sit: a sit tunnel without local, remote, key or parent is the kernel's own fallback device (which it creates with the module); set at least one`}},
		{"same identity", `"interfaces": [{"name": "gre1", "type": "gre", "gre": {"local": "192.0.2.1", "remote": "198.51.100.2", "key": 42}},
			{"name": "gre2", "type": "gre", "gre": {"local": "192.0.2.1", "remote": "198.51.100.2", "ikey": 42, "ttl": 9}},
			{"name": "ipip1", "type": "ipip", "ipip": {"local": "192.0.2.1", "remote": "198.51.100.2"}},
			{"name": "ip6t1", "type": "ip6tnl", "ip6tnl": {"remote": "2001:db8::2"}},
			{"name": "ip6t2", "type": "ip6tnl", "ip6tnl": {"remote": "2001:db8:0::2", "mode": "ip6ip6"}}]`,
			[]string{`interfaces[1].gre: gre tunnel from 192.0.2.1 to 198.51.100.2 with key 42 is already defined at interfaces[0].gre`,
				`interfaces[4].ip6tnl: ip6tnl tunnel from any to 2001:db8::2 is already defined at interfaces[3].ip6tnl`}},
		{"section", `"interfaces": [{"name": "gre1", "type": "gre"}, {"name": "ipip1", "type": "ipip", "gre": {"local": "192.0.2.1"}, "ipip": {"local": "192.0.2.1"}}]`,
			[]string{`interfaces[0].gre: is required for type "gre"`, `interfaces[1].gre: not allowed for type "ipip"`}},
		{"parent", `"interfaces": [{"name": "gre1", "type": "gre", "gre": {"parent": "gre1"}}, {"name": "ipip1", "type": "ipip", "ipip": {"parent": "nope"}}]`,
			[]string{`interfaces[0].gre.parent: interface "gre1" cannot be its own parent`, `interfaces[1].ipip.parent: interface "nope" is not defined`}},
	})
}
