package render

import (
	"net"
	"testing"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/items"
)

// A physical interface's match goes into its item, and ToIntent gives it
// back: the round trip renders the same items. The addresses of a matched
// NIC depend on its item, by the intent's name.
func TestMatchRendersAndRoundTrips(t *testing.T) {
	in := &intent.Intent{Version: intent.Version, Interfaces: []intent.Interface{{
		Name: "lan0", Type: intent.LinkPhysical, Addresses: []string{"192.0.2.1/24"},
		Match: &intent.Match{PermanentMAC: "52:54:00:12:34:56", Driver: "e1000", Path: "pci-0000:00:03.0", Name: "en*"},
	}}}
	g := mustRender(t, in)
	it, ok := g.Get(items.InterfaceRef("lan0"))
	if !ok {
		t.Fatal("no interface/lan0")
	}
	want := &items.NICMatch{PermanentMAC: net.HardwareAddr{0x52, 0x54, 0, 0x12, 0x34, 0x56}, Driver: "e1000", Path: "pci-0000:00:03.0", Name: "en*"}
	if m := it.(*items.Interface).Match; !m.Equal(want) {
		t.Errorf("match = %s, want %s", m, want)
	}
	if deps := it.Dependencies(); len(deps) != 0 {
		t.Errorf("a matched NIC depends on %v, want nothing (it finds its link itself)", deps)
	}
	back, _ := reparse(t, ToIntent(itemsOf(g)))
	sameItems(t, mustRender(t, back), g)
}
