package ethtool

import (
	"testing"

	"github.com/netagent/netagent/internal/disrupt"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

func TestPredictFlapsOnChannelsAndRingsOnly(t *testing.T) {
	old := &items.Ethtool{Interface: "eth0", Settings: map[string]uint32{"features/rx-gro": 0, "channels/combined": 2}}
	feat := &items.Ethtool{Interface: "eth0", Settings: map[string]uint32{"features/rx-gro": 1, "channels/combined": 2}}
	if p := Predict(reconciler.OpModify, old, feat); p.Effect != disrupt.None {
		t.Errorf("a feature toggle: %v, want in place", p)
	}
	ch := &items.Ethtool{Interface: "eth0", Settings: map[string]uint32{"features/rx-gro": 0, "channels/combined": 4}}
	p := Predict(reconciler.OpModify, old, ch)
	if p.Effect != disrupt.Flap || p.Certain || len(p.LinksDown) != 1 || p.LinksDown[0] != "eth0" ||
		p.Why != "channels/combined 2 -> 4: many NIC drivers reset the link (carrier down and up) on a channel change" {
		t.Errorf("a channel change: %+v", p)
	}
	if p := Predict(reconciler.OpDelete, ch, ch); p.Effect != disrupt.Flap {
		t.Errorf("giving channels back: %v, want a possible flap", p)
	}
	less := &items.Ethtool{Interface: "eth0", Settings: map[string]uint32{"features/rx-gro": 0}}
	if p := Predict(reconciler.OpModify, &items.Ethtool{Interface: "eth0", Settings: map[string]uint32{"features/rx-gro": 0, "rings/rx": 512}}, less); p.Effect != disrupt.Flap {
		t.Errorf("a ring given back: %v, want a possible flap", p)
	}
}

func TestPredictFlapsOnAdvertisedModes(t *testing.T) {
	old := &items.Ethtool{Interface: "eth0", Sets: map[string][]string{items.EthtoolAdvertise: {"1000baseT/Full", "100baseT/Full"}}}
	want := &items.Ethtool{Interface: "eth0", Sets: map[string][]string{items.EthtoolAdvertise: {"100baseT/Full"}}}
	p := Predict(reconciler.OpModify, old, want)
	if p.Effect != disrupt.Flap || p.Why != "link/advertise 1000baseT/Full,100baseT/Full -> 100baseT/Full: the link renegotiates" {
		t.Errorf("an advertised set change: %+v", p)
	}
	if p := Predict(reconciler.OpModify, want, &items.Ethtool{Interface: "eth0", Sets: want.Sets, MTU: 9000}); p.Effect != disrupt.None {
		t.Errorf("the MTU followed only: %+v, want in place", p)
	}
}
