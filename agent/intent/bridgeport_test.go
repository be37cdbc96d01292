package intent

import "testing"

// bridgeDoc is a filtering bridge br0 with the port eth0, whose
// bridgePort section is port, and the bridge's own vlans self.
func bridgeDoc(filtering bool, self, port string) string {
	br := `{"name": "br0", "type": "bridge", "bridge": {"vlanFiltering": ` + map[bool]string{true: "true", false: "false"}[filtering]
	if self != "" {
		br += `, "vlans": ` + self
	}
	br += `}}`
	eth := `{"name": "eth0", "type": "physical", "master": "br0"`
	if port != "" {
		eth += `, "bridgePort": ` + port
	}
	return `"interfaces": [` + br + `, ` + eth + `}]`
}

func TestValidateBridgePort(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"access and trunk", bridgeDoc(true, `[{"vid": 10}]`,
			`{"cost": 100, "priority": 32, "vlans": [{"vid": 10, "pvid": true, "untagged": true}, {"vids": "20-30"}, {"vids": "4094"}]}`), nil},
		{"no vlans at all", bridgeDoc(true, `[]`, `{"vlans": []}`), nil},
		{"cost and priority without filtering", bridgeDoc(false, ``, `{"cost": 65535, "priority": 0}`), nil},
		{"limits", bridgeDoc(true, ``, `{"cost": 65536, "priority": 64, "vlans": [{"vid": 4095}, {"vid": -1}]}`), []string{
			"interfaces[1].bridgePort.cost: 65536 is out of range 1-65535",
			"interfaces[1].bridgePort.priority: 64 is out of range 0-63",
			"interfaces[1].bridgePort.vlans[0].vid: 4095 is out of range 1-4094",
			"interfaces[1].bridgePort.vlans[1].vid: -1 is out of range 1-4094",
		}},
		{"bad ranges", bridgeDoc(true, ``, `{"vlans": [{"vids": "30-20"}, {"vids": "0-5"}, {"vids": "1-4095"}, {"vids": "x"}, {"vids": "1-"}]}`), []string{
			`interfaces[1].bridgePort.vlans[0].vids: "30-20" is not a range "from-to" within 1-4094`,
			`interfaces[1].bridgePort.vlans[1].vids: "0-5" is not a range "from-to" within 1-4094`,
			`interfaces[1].bridgePort.vlans[2].vids: "1-4095" is not a range "from-to" within 1-4094`,
			`interfaces[1].bridgePort.vlans[3].vids: "x" is not a range "from-to" within 1-4094`,
			`interfaces[1].bridgePort.vlans[4].vids: "1-" is not a range "from-to" within 1-4094`,
		}},
		{"vid and vids", bridgeDoc(true, ``, `{"vlans": [{"vid": 3, "vids": "1-2"}, {"untagged": true}]}`), []string{
			"interfaces[1].bridgePort.vlans[0]: vid and vids exclude each other",
			`interfaces[1].bridgePort.vlans[1]: needs vid (1-4094) or vids ("20-30")`,
		}},
		{"overlap", bridgeDoc(true, `[{"vids": "1-10"}, {"vid": 10}]`, `{"vlans": [{"vids": "20-30"}, {"vid": 25}, {"vids": "30-40"}]}`), []string{
			"interfaces[0].bridge.vlans[1]: overlaps interfaces[0].bridge.vlans[0] (1-10)",
			"interfaces[1].bridgePort.vlans[1]: overlaps interfaces[1].bridgePort.vlans[0] (20-30)",
			"interfaces[1].bridgePort.vlans[2]: overlaps interfaces[1].bridgePort.vlans[0] (20-30)",
		}},
		{"two pvids, pvid on a range", bridgeDoc(true, ``, `{"vlans": [{"vid": 5, "pvid": true}, {"vid": 6, "pvid": true}, {"vids": "7-8", "pvid": true}]}`), []string{
			"interfaces[1].bridgePort.vlans[1].pvid: a second pvid (the first is interfaces[1].bridgePort.vlans[0]): a member has one",
			`interfaces[1].bridgePort.vlans[2].pvid: the pvid is one vid, not the range "7-8"`,
			"interfaces[1].bridgePort.vlans[2].pvid: a second pvid (the first is interfaces[1].bridgePort.vlans[0]): a member has one",
		}},
		{"vlans without filtering", bridgeDoc(false, `[{"vid": 1}]`, `{"vlans": [{"vid": 1}]}`), []string{
			`interfaces[0].bridge.vlans: needs vlanFiltering: true on bridge "br0" (without it the bridge forwards every VLAN)`,
			`interfaces[1].bridgePort.vlans: needs vlanFiltering: true on bridge "br0" (without it the bridge forwards every VLAN)`,
		}},
		{"no master", `"interfaces": [{"name": "eth0", "type": "physical", "bridgePort": {"cost": 5}}]`, []string{
			`interfaces[0].bridgePort: only for a bridge port: "eth0" has no master`,
		}},
		{"bond port", `"interfaces": [{"name": "bond0", "type": "bond"}, {"name": "eth0", "type": "physical", "master": "bond0", "bridgePort": {"priority": 1}}]`, []string{
			`interfaces[1].bridgePort: only for a bridge port: master "bond0" is a bond interface`,
		}},
	})
}
