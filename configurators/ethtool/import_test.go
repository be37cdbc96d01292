package ethtool

import (
	"maps"
	"testing"

	"github.com/netagent/netagent/items"
)

// ReadCurrent takes, per link, the current value of every setting the
// intent's ethtool section has and the driver lets be changed: a veth's
// changeable features (not the fixed rx-lro) and channels; an e1000's
// features, the rings it reports a maximum for (not rx-mini, rx-jumbo:
// maximum 0) and pause autonegotiation, not the pause rx and tx it
// resolved with it on, nor its link mode (speed, duplex, autoneg,
// advertised): both negotiated. With pause autonegotiation off, rx and tx
// are settings, and in. A link that is gone is left out.
func TestReadCurrent(t *testing.T) {
	k := NewFakeKernel()
	k.AddVeth("veth0", 2)
	k.AddE1000("eth0", 3)
	got, err := k.ReadCurrent([]string{"veth0", "eth0", "gone0"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]uint32{
		"veth0": {"features/rx-checksum": 1, "features/tx-checksum-ip-generic": 1, "features/rx-gro": 0, "channels/rx": 1, "channels/tx": 1},
		"eth0":  {"features/rx-checksum": 1, "features/rx-gro": 1, "rings/rx": 256, "rings/tx": 256, "pause/autoneg": 1},
	}
	pause := k.AddE1000("eth1", 4).Groups["pause"]
	pause.Cur["autoneg"] = 0
	more, err := k.ReadCurrent([]string{"eth1"})
	if err != nil || len(more) != 1 || more[0].(*items.Ethtool).Settings["pause/rx"] != 1 || more[0].(*items.Ethtool).Settings["pause/autoneg"] != 0 {
		t.Errorf("ReadCurrent with pause autoneg off: %v %v, want pause rx and tx in", more, err)
	}
	if len(got) != len(want) {
		t.Fatalf("ReadCurrent: %v, want items of %d links", got, len(want))
	}
	for _, it := range got {
		e := it.(*items.Ethtool)
		if !maps.Equal(e.Settings, want[e.Interface]) || len(e.Sets) > 0 || e.MTU != 0 {
			t.Errorf("ReadCurrent of %s: %v, want %v", e.Interface, e, want[e.Interface])
		}
	}
}
