package ethtool

import (
	"errors"
	"regexp"
	"testing"

	"github.com/netagent/netagent/internal/testns"
	"github.com/vishvananda/netlink"
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
// veth reports link modes and no Wake-on-LAN.
func TestModesOnVeth(t *testing.T) {
	testns.RequireRoot(t)
	tgt := testns.New(t)
	la := netlink.NewLinkAttrs()
	la.Name = "et0"
	if err := tgt.NL.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: "et1"}); err != nil {
		t.Fatal(err)
	}
	l, _ := tgt.NL.LinkByName("et0")
	m, err := DialModes(tgt.Do)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.LinkMode(l.Attrs().Index); err != nil {
		t.Errorf("link modes of a veth: %v", err)
	}
	if _, err := m.WakeOnLAN(l.Attrs().Index); !errors.Is(err, ErrNotSupported) {
		t.Errorf("wake-on-lan of a veth: %v, want ErrNotSupported", err)
	}
}
