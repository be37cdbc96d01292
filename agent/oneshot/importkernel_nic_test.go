package oneshot

import (
	"net"
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// withMatches gives each physical interface its NIC's permanent MAC as
// its match; one whose permanent MAC another link has too is kept by its
// name, with a warning naming both; the loopback, an interface without a
// permanent MAC (a veth), a virtual one and one that has a match keep
// what they have; the items given are not changed.
func TestWithMatches(t *testing.T) {
	mac := func(last byte) net.HardwareAddr { return net.HardwareAddr{2, 0, 0, 0, 0, last} }
	eth0 := &items.Interface{IfName: "eth0", Kind: items.KindPhysical, MTU: 1500}
	others := []dg.Item{
		eth0,
		&items.Interface{IfName: "eth1", Kind: items.KindPhysical},
		&items.Interface{IfName: "eth2", Kind: items.KindPhysical},
		&items.Interface{IfName: "up0", Kind: items.KindPhysical},
		&items.Interface{IfName: "lo", Kind: items.KindPhysical},
		&items.Interface{IfName: "br0", Kind: items.KindBridge},
		&items.Interface{IfName: "eth5", Kind: items.KindPhysical, Match: &items.NICMatch{Name: "enp5*"}},
		&items.Route{Dev: "eth0"},
	}
	perm := map[string]net.HardwareAddr{"eth0": mac(1), "eth1": mac(7), "eth2": mac(7), "up0": nil, "lo": nil, "br0": mac(9), "eth5": mac(5)}
	got, warnings := withMatches(others, perm)
	matches := map[string]string{}
	for _, it := range got {
		if i, ok := it.(*items.Interface); ok && i.Match != nil {
			matches[i.IfName] = i.Match.String()
		}
	}
	if len(matches) != 2 || matches["eth0"] != (&items.NICMatch{PermanentMAC: mac(1)}).String() || matches["eth5"] != (&items.NICMatch{Name: "enp5*"}).String() {
		t.Errorf("matches %v, want eth0's permanent MAC and eth5's own", matches)
	}
	if g := got[0].(*items.Interface); g.MTU != 1500 || eth0.Match != nil {
		t.Errorf("eth0 %v (given %v): want its MTU kept and the item given unchanged", g, eth0)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0].Why, "links eth1, eth2 have it") || !warnings[0].Kept {
		t.Errorf("warnings %v, want one for eth1 and one for eth2, naming both, kept", warnings)
	}
}

// withEthtool adds the settings read of a physical interface the list
// has and that has none of netagent's, warns for a virtual link's (made
// anew: not imported), and says nothing of lo or a link not in the list.
func TestWithEthtool(t *testing.T) {
	own := &items.Ethtool{Interface: "eth1", Settings: map[string]uint32{"features/rx-gro": 0}}
	list := []dg.Item{
		&items.Interface{IfName: "eth0", Kind: items.KindPhysical},
		&items.Interface{IfName: "eth1", Kind: items.KindPhysical}, own,
		&items.Interface{IfName: "br0", Kind: items.KindBridge},
		&items.Interface{IfName: "lo", Kind: items.KindPhysical},
	}
	read := []dg.Item{}
	for _, n := range []string{"eth0", "eth1", "br0", "lo", "gone0"} {
		read = append(read, &items.Ethtool{Interface: n, Settings: map[string]uint32{"features/rx-gro": 1}})
	}
	got, warnings := withEthtool(list, read)
	var settings []string
	for _, it := range got {
		if e, ok := it.(*items.Ethtool); ok {
			settings = append(settings, e.String())
		}
	}
	want := []string{own.String(), read[0].(*items.Ethtool).String()}
	if strings.Join(settings, "\n") != strings.Join(want, "\n") {
		t.Errorf("ethtool items %q, want %q", settings, want)
	}
	if len(warnings) != 1 || warnings[0].Object != "br0" || !strings.Contains(warnings[0].Why, "bridge are not imported") {
		t.Errorf("warnings %v, want one for br0", warnings)
	}
}
