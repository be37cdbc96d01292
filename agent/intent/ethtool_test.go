package intent

import (
	"maps"
	"slices"
	"testing"

	"github.com/netagent/netagent/items"
)

// ethtoolDoc is a physical eth0 with the ethtool section et.
func ethtoolDoc(et string) string {
	return `"interfaces": [{"name": "eth0", "type": "physical", "ethtool": ` + et + `}]`
}

func TestValidateEthtool(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"everything", ethtoolDoc(`{"features": {"rx-checksum": false, "tso": false, "generic-receive-offload": true},
			"channels": {"combined": 4}, "rings": {"rx": 4096, "tx": 1024, "rx-jumbo": 0},
			"coalesce": {"rx-usecs": 50, "adaptive-rx": true}, "pause": {"autoneg": false, "rx": true, "tx": true},
			"link": {"speed": 1000, "duplex": "full", "autoneg": false}, "wakeOnLan": ["magic", "phy"]}`), nil},
		{"wake-on-lan off", ethtoolDoc(`{"wakeOnLan": []}`), nil},
		{"unknown names", ethtoolDoc(`{"features": {"rx-checksumz": true, "TSO": false}, "wakeOnLan": ["magic", "bogus", "magic"]}`), []string{
			`interfaces[0].ethtool.features["TSO"]: unknown feature (the kernel's names, as ethtool -k lists them, or the ethtool CLI's aliases)`,
			`interfaces[0].ethtool.features["rx-checksumz"]: unknown feature (the kernel's names, as ethtool -k lists them, or the ethtool CLI's aliases)`,
			`interfaces[0].ethtool.wakeOnLan[1]: "bogus" is not one of arp, broadcast, filter, magic, magicsecure, multicast, phy, unicast`,
			`interfaces[0].ethtool.wakeOnLan[2]: "magic" listed twice`,
		}},
		{"absurd values", ethtoolDoc(`{"channels": {"rx": -1, "combined": 5000}, "rings": {"tx": 70000}, "coalesce": {"rx-usecs": 2000000, "tx-frames": -3}, "link": {"speed": 0, "duplex": "both"}}`), []string{
			"interfaces[0].ethtool.channels.rx: -1 is out of range 0-4096",
			"interfaces[0].ethtool.channels.combined: 5000 is out of range 0-4096",
			"interfaces[0].ethtool.rings.tx: 70000 is out of range 0-65536",
			"interfaces[0].ethtool.coalesce.rx-usecs: 2000000 is out of range 0-1000000",
			"interfaces[0].ethtool.coalesce.tx-frames: -3 is out of range 0-65536",
			"interfaces[0].ethtool.link.speed: 0 is out of range 1-1600000",
			`interfaces[0].ethtool.link.duplex: "both" is not one of half, full`,
		}},
		{"alias against kernel name", ethtoolDoc(`{"features": {"gro": true, "rx-gro": false}}`), []string{
			`interfaces[0].ethtool.features["rx-gro"]: contradicts "gro": both set rx-gro`,
		}},
	})
}

func TestParseRefusesUnknownEthtoolMembers(t *testing.T) {
	_, err := Parse([]byte(doc(ethtoolDoc(`{"ring": {"rx": 1}}`))))
	checkMessages(t, err, []string{`interfaces[0].ethtool: unknown field "ring"; did you mean "rings"?`})
}

func TestEthtoolSettings(t *testing.T) {
	in := mustParse(t, doc(ethtoolDoc(`{"features": {"gro": true, "rx": false}, "channels": {"rx": 2}, "pause": {"tx": true},
		"link": {"duplex": "half", "speed": 100}, "wakeOnLan": ["magic", "phy"]}`)))
	got := in.Interfaces[0].Ethtool.Settings()
	want := map[string]uint32{"features/rx-gro": 1, "features/rx-checksum": 0, "channels/rx": 2, "pause/tx": 1,
		"link/duplex": items.EthtoolDuplexHalf, "link/speed": 100, "wake-on-lan/modes": 1<<5 | 1}
	if !maps.Equal(got, want) {
		t.Errorf("settings %v, want %v", got, want)
	}
}

// TestWakeOnLanModesAreTheItemsBits: the intent's modes are the modes
// the item knows bits of.
func TestWakeOnLanModesAreTheItemsBits(t *testing.T) {
	if got, want := enumStrings(wakeOnLanModes), slices.Sorted(maps.Keys(items.EthtoolWakeOnLan)); !slices.Equal(got, want) {
		t.Errorf("modes %v, items' %v", got, want)
	}
}

func TestValidateEthtoolAdvertise(t *testing.T) {
	runValidateCases(t, []validateCase{
		{"modes", ethtoolDoc(`{"link": {"autoneg": true, "advertise": ["1000baseT/Full", "100baseT/Full", "800000baseDR8_2/Full"]}}`), nil},
		{"bad modes", ethtoolDoc(`{"link": {"advertise": ["1000baseT/full", "Autoneg", "100baseT/Full", "100baseT/Full"]}}`), []string{
			`interfaces[0].ethtool.link.advertise[0]: "1000baseT/full" is not a link mode (the kernel's speed and duplex modes as ethtool lists them, e.g. 1000baseT/Full)`,
			`interfaces[0].ethtool.link.advertise[1]: "Autoneg" is not a link mode (the kernel's speed and duplex modes as ethtool lists them, e.g. 1000baseT/Full)`,
			`interfaces[0].ethtool.link.advertise[3]: "100baseT/Full" listed twice`,
		}},
		{"autoneg off", ethtoolDoc(`{"link": {"autoneg": false, "advertise": ["1000baseT/Full"]}}`), []string{
			"interfaces[0].ethtool.link.advertise: needs autoneg: advertised modes are what autonegotiation offers, and link.autoneg is false",
		}},
		{"none", ethtoolDoc(`{"link": {"advertise": []}}`), []string{
			"interfaces[0].ethtool.link.advertise: names no link mode: a NIC must advertise at least one (leave advertise out to keep what it offers)",
		}},
	})
	in := mustParse(t, doc(ethtoolDoc(`{"link": {"advertise": ["100baseT/Full", "1000baseT/Full"]}}`)))
	want := map[string][]string{items.EthtoolAdvertise: {"1000baseT/Full", "100baseT/Full"}}
	if got := in.Interfaces[0].Ethtool.Sets(); !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("sets %v, want %v", got, want)
	}
}
