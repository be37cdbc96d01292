package ethtool

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

func advertiseItem(settings map[string]uint32, modes ...string) *items.Ethtool {
	return &items.Ethtool{Interface: "et0", Settings: settings, Sets: map[string][]string{items.EthtoolAdvertise: modes}}
}

func advertised(n *FakeNIC) []string { return n.Groups["link"].Sets["advertise"] }

var e1000Modes = []string{"1000baseT/Full", "100baseT/Full", "100baseT/Half", "10baseT/Full", "10baseT/Half"}

// TestAdvertiseAppliedTwiceWritesNothingAndGivesBack: the advertised
// modes are written (one write), read back as the intent's, a second
// converge writes nothing, and when the set leaves the intent (the item
// keeps another setting) the five modes found come back.
func TestAdvertiseAppliedTwiceWritesNothingAndGivesBack(t *testing.T) {
	k := NewFakeKernel()
	nic := k.AddE1000("et0", 3)
	dir := t.TempDir()
	c := k.Configurator(dir)
	want := advertiseItem(nil, "1000baseT/Full", "100baseT/Full")
	if err := c.Create(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	if got := advertised(nic); !slices.Equal(got, want.Sets[items.EthtoolAdvertise]) || k.Writes != 1 {
		t.Fatalf("advertised %v after %d writes", got, k.Writes)
	}
	if err := c.Modify(context.Background(), want, want); err != nil || k.Writes != 1 {
		t.Errorf("a second converge: %v, %d writes", err, k.Writes-1)
	}
	got, err := k.ReadBack(dir, dg.New("hint", want))
	if err != nil || len(got) != 1 || !got[0].Equal(want) {
		t.Fatalf("read back %v, %v; want %v", got, err, want)
	}
	less := &items.Ethtool{Interface: "et0", Settings: map[string]uint32{"rings/rx": 512}}
	got, _ = k.ReadBack(dir, dg.New("hint", less))
	if len(got) != 1 || !slices.Equal(got[0].(*items.Ethtool).Sets[items.EthtoolAdvertise], want.Sets[items.EthtoolAdvertise]) {
		t.Errorf("the read-back hides the recorded set that left the intent: %v", got)
	}
	if err := c.Modify(context.Background(), got[0], less); err != nil {
		t.Fatal(err)
	}
	if got := advertised(nic); !slices.Equal(got, e1000Modes) {
		t.Errorf("given back %v, want %v", got, e1000Modes)
	}
	if err := c.Delete(context.Background(), less); err != nil {
		t.Fatal(err)
	}
	if got, _ := k.ReadBack(dir, nil); len(got) != 0 {
		t.Errorf("records left after delete: %v", got)
	}
}

// TestAdvertiseRefusedBeforeAnythingChanges: a mode the NIC does not
// support, named with the modes it does, and modes asked with autoneg
// off (by the intent or on the NIC) are refused by Check and by the
// converge alike, before any write; the fake itself answers EINVAL to
// an unsupported mode, as the kernel does.
func TestAdvertiseRefusedBeforeAnythingChanges(t *testing.T) {
	for name, tc := range map[string]struct {
		it      *items.Ethtool
		autoneg uint32
		want    string
	}{
		"unsupported": {advertiseItem(map[string]uint32{"rings/rx": 512}, "10000baseT/Full", "1000baseT/Full"), 1,
			"link advertise of et0: the NIC does not support 10000baseT/Full (it supports 1000baseT/Full, 100baseT/Full, 100baseT/Half, 10baseT/Full, 10baseT/Half)"},
		"autoneg off in the intent": {advertiseItem(map[string]uint32{"link/autoneg": 0}, "1000baseT/Full"), 1,
			"link/advertise of et0: advertised link modes need autoneg on, and it is off"},
		"autoneg off on the NIC": {advertiseItem(nil, "1000baseT/Full"), 0,
			"link/advertise of et0: advertised link modes need autoneg on, and it is off"},
	} {
		t.Run(name, func(t *testing.T) {
			k := NewFakeKernel()
			nic := k.AddE1000("et0", 3)
			nic.Groups["link"].Cur["autoneg"] = tc.autoneg
			c := k.Configurator(t.TempDir())
			check := c.Check(tc.it)
			err := c.Create(context.Background(), tc.it)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if check == nil || check.Error() != err.Error() {
				t.Errorf("Check = %v, apply = %v", check, err)
			}
			if k.Writes != 0 || nic.Groups["rings"].Cur["rx"] != 256 {
				t.Errorf("something changed: %d writes", k.Writes)
			}
		})
	}
	k := NewFakeKernel()
	k.AddE1000("et0", 3)
	if err := k.SetSets("link", 3, map[string][]string{"advertise": {"10000baseT/Full"}}); err == nil || !strings.Contains(err.Error(), "invalid argument") {
		t.Errorf("the fake took an unsupported mode: %v", err)
	}
}

// TestAdvertiseWithAutonegTurnedOn: the intent turns autoneg on and
// names the modes; autoneg is written first (the NIC keeps an advertised
// set while autoneg is off unused), then the modes. Autoneg off reports
// no mode advertised, so the original recorded is every supported mode,
// what autonegotiation offers by default; the give-back turns autoneg
// off and writes no set (nothing is offered), and the record goes.
func TestAdvertiseWithAutonegTurnedOn(t *testing.T) {
	k := NewFakeKernel()
	nic := k.AddE1000("et0", 3)
	nic.Groups["link"].Cur["autoneg"] = 0
	dir := t.TempDir()
	c := k.Configurator(dir)
	want := advertiseItem(map[string]uint32{"link/autoneg": 1}, "100baseT/Full")
	if err := c.Create(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	if got := advertised(nic); nic.Groups["link"].Cur["autoneg"] != 1 || !slices.Equal(got, []string{"100baseT/Full"}) {
		t.Fatalf("autoneg %d, advertised %v", nic.Groups["link"].Cur["autoneg"], got)
	}
	orig, err := c.state.originals("et0", 3)
	if err != nil || !slices.Equal(orig.Sets[items.EthtoolAdvertise], e1000Modes) || orig.Settings["link/autoneg"] != 0 {
		t.Errorf("recorded %+v, %v", orig, err)
	}
	writes := k.Writes
	if err := c.Delete(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	if nic.Groups["link"].Cur["autoneg"] != 0 || k.Writes != writes+1 {
		t.Errorf("give-back: autoneg %d, %d writes (want autoneg off, one write)", nic.Groups["link"].Cur["autoneg"], k.Writes-writes)
	}
	if got, _ := k.ReadBack(dir, nil); len(got) != 0 {
		t.Errorf("records left after delete: %v", got)
	}
}

// TestAdvertiseRefusedOnANICWithoutModes: a veth supports no link mode.
func TestAdvertiseRefusedOnANICWithoutModes(t *testing.T) {
	k := NewFakeKernel()
	k.AddVeth("et0", 3)
	err := k.Configurator("").Check(advertiseItem(map[string]uint32{"link/autoneg": 1}, "1000baseT/Full"))
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "ethtool link of et0") {
		t.Errorf("Check = %v", err)
	}
}
