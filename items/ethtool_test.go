package items

import (
	"slices"
	"testing"
)

func TestExpandFeature(t *testing.T) {
	for name, want := range map[string][]string{
		"rx-gro":                   {"rx-gro"},
		"gro":                      {"rx-gro"},
		"generic-receive-offload":  {"rx-gro"},
		"rx":                       {"rx-checksum"},
		"tx":                       {"tx-checksum-ipv4", "tx-checksum-ip-generic", "tx-checksum-ipv6", "tx-checksum-fcoe-crc", "tx-checksum-sctp"},
		"tso":                      {"tx-tcp-segmentation", "tx-tcp-ecn-segmentation", "tx-tcp-mangleid-segmentation", "tx-tcp6-segmentation", "tx-tcp-accecn-segmentation"},
		"sg":                       {"tx-scatter-gather", "tx-scatter-gather-fraglist"},
		"tcp-segmentation-offload": {"tx-tcp-segmentation", "tx-tcp-ecn-segmentation", "tx-tcp-mangleid-segmentation", "tx-tcp6-segmentation", "tx-tcp-accecn-segmentation"},
		"bogus":                    nil,
	} {
		if got := ExpandFeature(name); !slices.Equal(got, want) {
			t.Errorf("ExpandFeature(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestEthtoolDependsOnItsInterface(t *testing.T) {
	e := &Ethtool{Interface: "eth0", Settings: map[string]uint32{"features/rx-gro": 1}}
	deps := e.Dependencies()
	if len(deps) != 1 || deps[0].RequiredItem != InterfaceRef("eth0") {
		t.Errorf("deps = %v", deps)
	}
	o := &Ethtool{Interface: "eth0", Settings: map[string]uint32{"features/rx-gro": 0}}
	if e.Equal(o) || !e.Equal(&Ethtool{Interface: "eth0", Settings: map[string]uint32{"features/rx-gro": 1}}) {
		t.Error("Equal does not compare the settings")
	}
	if got := e.String(); got != "ethtool eth0 features/rx-gro=1" {
		t.Errorf("String = %q", got)
	}
}

func TestEthtoolValidate(t *testing.T) {
	good := &Ethtool{Interface: "eth0", Settings: map[string]uint32{"features/rx-gro": 1, "rings/rx": 4096, "pause/rx": 1, "wake-on-lan/modes": 32}}
	if err := good.Validate(); err != nil {
		t.Errorf("good: %v", err)
	}
	for _, s := range []map[string]uint32{{"features/gro": 1}, {"features/rx-gro": 2}, {"rings/jumbo": 1}, {"pause/rx": 2}, {"bogus": 1}} {
		if err := (&Ethtool{Interface: "eth0", Settings: s}).Validate(); err == nil {
			t.Errorf("%v accepted", s)
		}
	}
}

func TestEthtoolSets(t *testing.T) {
	if len(EthtoolLinkModes) != 103 || EthtoolLinkModes[5] != "1000baseT/Full" || EthtoolLinkModes[49] != "None" || EthtoolLinkModes[91] != "100baseFX/Full" {
		t.Errorf("EthtoolLinkModes is not the kernel's list in bit order: %d names", len(EthtoolLinkModes))
	}
	good := &Ethtool{Interface: "eth0", Sets: map[string][]string{EthtoolAdvertise: {"1000baseT/Full", "100baseT/Full"}}, MTU: 9000}
	if err := good.Validate(); err != nil {
		t.Errorf("good: %v", err)
	}
	if got := good.String(); got != "ethtool eth0 link/advertise=1000baseT/Full,100baseT/Full (after mtu 9000)" {
		t.Errorf("String = %q", got)
	}
	other := &Ethtool{Interface: "eth0", Sets: map[string][]string{EthtoolAdvertise: {"1000baseT/Full"}}, MTU: 9000}
	if good.Equal(other) || good.Equal(&Ethtool{Interface: "eth0", Sets: good.Sets}) {
		t.Error("Equal does not compare the sets and the MTU")
	}
	for _, s := range []map[string][]string{
		{EthtoolAdvertise: {"100baseT/Full", "1000baseT/Full"}}, // not sorted
		{EthtoolAdvertise: {"1000baseT/Full", "1000baseT/Full"}},
		{EthtoolAdvertise: {"Autoneg"}}, // not a speed mode
		{EthtoolAdvertise: {"1000baseT/full"}},
		{"link/supported": {"1000baseT/Full"}},
	} {
		if err := (&Ethtool{Interface: "eth0", Sets: s}).Validate(); err == nil {
			t.Errorf("%v accepted", s)
		}
	}
}
