package depgraph_test

import (
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
)

func Example() {
	g := dg.New("network")
	g.Put(&item{typ: "link", name: "eth0", external: true})
	g.Put(mk("interface", "eth0", "link/eth0"))
	g.EditSubGraph("addresses").Put(mk("address", "eth0/192.0.2.10/24", "interface/eth0"))

	for it := range g.Items() {
		fmt.Println(dg.Ref(it), "depends on", g.Dependencies(dg.Ref(it)))
	}
	fmt.Println("dependants of interface/eth0:", g.Dependants(dg.ItemRef{Type: "interface", Name: "eth0"}))
	fmt.Println("addresses subgraph holds", g.SubGraph("addresses").Len(), "item")
	// Output:
	// address/eth0/192.0.2.10/24 depends on [interface/eth0]
	// interface/eth0 depends on [link/eth0]
	// link/eth0 depends on []
	// dependants of interface/eth0: [address/eth0/192.0.2.10/24]
	// addresses subgraph holds 1 item
}
