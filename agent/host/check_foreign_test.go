package host

import (
	"net/netip"
	"strings"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// Foreign objects never make the state differ; a missing item says which
// foreign object holds its identity, and objects marked ours that no item
// describes are listed.
func TestCompareForeign(t *testing.T) {
	r := &items.Route{Dst: netip.MustParsePrefix("10.200.0.0/16"), Dev: "eth0"}
	holder := &items.Foreign{Kind: items.TypeRoute, Desc: "10.200.0.0/16 ... proto 4", Holds: dg.Ref(r)}
	tos := &items.Foreign{Kind: items.TypeRoute, Desc: "main 10.202.0.0/16 metric 0 tos 0x4 proto 211", Owned: true}
	other := &items.Foreign{Kind: items.TypeRule, Desc: "ipv4 300: from all lookup 200 proto 4",
		Holds: dg.ItemRef{Type: items.TypeRule, Name: "ipv4 300: from all lookup 200"}}
	rep := Compare(dg.New("current", holder, tos, other), dg.New("intended", r))
	if len(rep.Diffs) != 1 || rep.Diffs[0].Kind != Missing || len(rep.Diffs[0].HeldBy) != 1 ||
		!strings.Contains(rep.Diffs[0].String(), "held by foreign route 10.200.0.0/16 ... proto 4") {
		t.Errorf("diffs %v", rep.Diffs)
	}
	if len(rep.Foreign) != 1 || rep.Foreign[0] != tos {
		t.Errorf("foreign %v, want the route with a tos", rep.Foreign)
	}
	if rep := Compare(dg.New("current", holder, tos, other), dg.New("intended")); !rep.Converged() {
		t.Errorf("foreign objects alone differ: %v", rep.Diffs)
	}
}
