package items_test

import (
	"fmt"
	"net/netip"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// A small gateway: an uplink NIC with an address and a default route that
// follows the uplink's carrier, and a LAN bridge with one port.
func Example() {
	uplinkAddr := netip.MustParsePrefix("203.0.113.2/24")
	graph := []dg.Item{
		&items.Link{IfName: "uplink0", Index: 2, Carrier: true, AdminUp: true, OperUp: true},
		&items.Interface{IfName: "uplink0", Kind: items.KindPhysical, AdminUp: true},
		&items.Address{Dev: "uplink0", Prefix: uplinkAddr},
		&items.Route{
			Dst: netip.MustParsePrefix("0.0.0.0/0"), Gw: netip.MustParseAddr("203.0.113.1"),
			Dev: "uplink0", Metric: 100,
			CarrierLink: "uplink0", GwAddress: items.AddressName("uplink0", uplinkAddr),
		},
		&items.Interface{IfName: "br0", Kind: items.KindBridge, AdminUp: true, Attrs: &items.BridgeAttrs{}},
		&items.Port{IfName: "lan0", Master: "br0", MasterKind: items.KindBridge},
		&items.Sysctl{Key: "net.ipv4.conf.uplink0.rp_filter", Value: "1"},
	}
	for _, item := range graph {
		fmt.Println(dg.Ref(item))
		fmt.Println("   ", item)
		for _, dep := range item.Dependencies() {
			fmt.Println("    needs", dep)
		}
	}
	// Output:
	// link/uplink0
	//     link uplink0 index 2 admin up oper up carrier
	// interface/uplink0
	//     interface uplink0 physical up
	//     needs link/uplink0 (present)
	// address/uplink0/203.0.113.2/24
	//     address 203.0.113.2/24 dev uplink0 scope global
	//     needs interface/uplink0
	// route/main 0.0.0.0/0 metric 100
	//     route 0.0.0.0/0 via 203.0.113.1 dev uplink0 table main metric 100 scope global
	//     needs interface/uplink0 (device)
	//     needs link/uplink0 (carrier up)
	//     needs address/uplink0/203.0.113.2/24 (gateway on-link)
	// interface/br0
	//     interface br0 bridge up
	// port/lan0
	//     port lan0 master br0 (bridge)
	//     needs interface/br0 (master)
	//     needs interface/lan0 (port)
	// sysctl/net.ipv4.conf.uplink0.rp_filter
	//     sysctl net.ipv4.conf.uplink0.rp_filter = 1
	//     needs interface/uplink0 (per-interface key)
}
