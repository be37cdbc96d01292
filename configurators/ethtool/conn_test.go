package ethtool

import (
	"errors"
	"math/big"
	"regexp"
	"testing"

	"github.com/mdlayher/ethtool"
)

// TestConnSetsVethFeaturesAndChannels sets a veth's GRO and rx channels
// over netlink and reads both back with the ethtool program.
func TestConnSetsVethFeaturesAndChannels(t *testing.T) {
	c, idx, run := vethIn(t)
	if err := c.SetFeatures(idx, map[string]bool{"rx-gro": true, "tx-checksum-ip-generic": false}); err != nil {
		t.Fatal(err)
	}
	k := run("ethtool", "-k", "et0")
	for _, want := range []string{`(?m)^generic-receive-offload: on$`, `(?m)^\s+tx-checksum-ip-generic: off$`} {
		if !regexp.MustCompile(want).MatchString(k) {
			t.Errorf("ethtool -k lacks %s:\n%s", want, k)
		}
	}
	if err := c.Set(Channels, idx, map[string]uint32{"rx": 2}); err != nil {
		t.Fatal(err)
	}
	l := run("ethtool", "-l", "et0")
	if !regexp.MustCompile(`(?s)Current hardware settings:\s+RX:\s+2\s`).MatchString(l) {
		t.Errorf("ethtool -l does not show rx 2:\n%s", l)
	}
	v, err := c.Get(Channels, idx)
	if err != nil || v.Cur["rx"] != 2 {
		t.Errorf("read back %v, %v; want rx 2", v, err)
	}
}

// TestConnReportsUnsupportedAndRefusals: a veth has no rings, and the
// kernel refuses channels above the maximum with its extended ack.
func TestConnReportsUnsupportedAndRefusals(t *testing.T) {
	c, idx, _ := vethIn(t)
	if _, err := c.Get(Rings, idx); !errors.Is(err, ErrNotSupported) {
		t.Errorf("rings of a veth: %v, want ErrNotSupported", err)
	}
	if err := c.Set(Channels, idx, map[string]uint32{"rx": 9}); err == nil {
		t.Error("rx 9 channels of at most 2 accepted")
	} else {
		t.Log(err)
	}
}

// TestModesOnVeth: the library's client dials inside the namespace; a
// veth has no Wake-on-LAN, and no link mode write (the library's write
// of an advertised 1000baseT/Full reaches the kernel, which answers
// EOPNOTSUPP: the veth driver has no set_link_ksettings).
func TestModesOnVeth(t *testing.T) {
	tgt, idx := vethNS(t)
	m, err := DialModes(tgt.Do)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.SetLinkMode(idx, &ethtool.LinkModeUpdate{Advertise: big.NewInt(1 << 5)}); !errors.Is(err, ErrNotSupported) {
		t.Errorf("a veth's advertised modes set: %v, want ErrNotSupported", err)
	}
	if _, err := m.WakeOnLAN(idx); !errors.Is(err, ErrNotSupported) {
		t.Errorf("wake-on-lan of a veth: %v, want ErrNotSupported", err)
	}
}
