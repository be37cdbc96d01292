package intent

import "testing"

func TestValidateMatch(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"every key", `"interfaces": [{"name": "lan0", "type": "physical", "match": {"permanentMac": "52:54:00:12:34:56",
			"mac": "52:54:00:12:34:57", "driver": "e1000", "path": "pci-0000:00:03.0", "name": "en*"}}]`, nil},
		{"not physical", `"interfaces": [{"name": "br0", "type": "bridge", "match": {"driver": "veth"}}]`,
			[]string{"interfaces[0].match: can only be set on a physical interface, not on a bridge"}},
		{"no key", `"interfaces": [{"name": "lan0", "type": "physical", "match": {}}]`,
			[]string{"interfaces[0].match: has no key: give permanentMac, mac, driver, path or name"}},
		{"multicast and zero", `"interfaces": [{"name": "lan0", "type": "physical", "match": {"permanentMac": "01:00:5e:00:00:01", "mac": "00:00:00:00:00:00"}}]`,
			[]string{"interfaces[0].match.permanentMac: 01:00:5e:00:00:01 is a multicast MAC address",
				"interfaces[0].match.mac: 00:00:00:00:00:00 is the zero MAC address"}},
		{"bad glob, driver, path", `"interfaces": [{"name": "lan0", "type": "physical", "match": {"name": "en[", "driver": "a b", "path": "pci/x"}}]`,
			[]string{`interfaces[0].match.driver: "a b" is not a driver (printable, no spaces or /, at most 32 bytes)`,
				`interfaces[0].match.path: "pci/x" is not a path (printable, no spaces or /, at most 255 bytes)`,
				`interfaces[0].match.name: "en[" is not a valid glob (path.Match syntax, like "enp*")`}},
		{"same match twice", `"interfaces": [{"name": "lan0", "type": "physical", "match": {"mac": "52:54:00:12:34:56"}},
			{"name": "lan1", "type": "physical", "match": {"mac": "52:54:00:12:34:56"}}]`,
			[]string{"interfaces[1].match: matches the same NIC as the match at interfaces[0].match"}},
	})
}
