package oneshot

import (
	"net/netip"
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// withOthers keeps netagent's items, drops the external links and foreign
// objects read-back describes them by, adds the others' items that none
// of netagent's has the identity of, and warns for every Foreign of
// others with its Why.
func TestWithOthers(t *testing.T) {
	own := []dg.Item{
		&items.Interface{IfName: "br0", Kind: items.KindBridge},
		&items.Link{IfName: "eth0"},
		&items.Foreign{Kind: items.TypeRoute, Desc: "10.8.0.0/16 via 10.9.0.2 dev eth0 proto 3"},
	}
	others := []dg.Item{
		&items.Interface{IfName: "br0", Kind: items.KindBridge, MTU: 9000}, // netagent's: its item wins
		&items.Interface{IfName: "eth0", Kind: items.KindPhysical},
		&items.Route{Dst: netip.MustParsePrefix("10.8.0.0/16"), Gw: netip.MustParseAddr("10.9.0.2"), Dev: "eth0"},
		&items.Foreign{Kind: items.TypeInterface, Desc: "tun0 kind tun", Why: "links of kind tun are not in the intent"},
	}
	got, warnings := withOthers(own, others)
	var refs []dg.ItemRef
	for _, it := range got {
		refs = append(refs, dg.Ref(it))
	}
	if want := []dg.ItemRef{dg.Ref(own[0]), dg.Ref(others[1]), dg.Ref(others[2])}; !slices.Equal(refs, want) {
		t.Errorf("items: %v, want %v", refs, want)
	}
	if br := got[0].(*items.Interface); br.MTU != 0 {
		t.Errorf("br0 is the others' item (mtu %d), want netagent's", br.MTU)
	}
	if len(warnings) != 1 || warnings[0].Key != "interface tun0 kind tun" || warnings[0].Why != "links of kind tun are not in the intent" {
		t.Errorf("warnings: %+v, want one for tun0 with its why", warnings)
	}
}

// Past maxKernelWarnings, one warning says how many more there were.
func TestWithOthersBoundsWarnings(t *testing.T) {
	var others []dg.Item
	for i := range maxKernelWarnings + 5 {
		others = append(others, &items.Foreign{Kind: items.TypeRoute, Desc: string(rune('a'+i%26)) + "x", Why: "w"})
	}
	_, warnings := withOthers(nil, others)
	if len(warnings) != maxKernelWarnings+1 || warnings[maxKernelWarnings].Why != "5 more objects left out, as above" {
		t.Errorf("%d warnings, last %+v", len(warnings), warnings[len(warnings)-1])
	}
}
