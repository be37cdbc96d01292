package render

import (
	"net"

	"github.com/netagent/netagent/agent/intent"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// The neighbors section.
var neighborsSection = section{
	path:   "neighbors",
	render: (*builder).neighbors,
	refs: func(it dg.Item) []string {
		if n, ok := it.(*items.Neighbor); ok {
			return []string{n.Dev}
		}
		return nil
	},
	toIntent: func(inv *inverter, out *intent.Intent) {
		for _, n := range sectionItems[*items.Neighbor](inv) {
			out.Neighbors = append(out.Neighbors, intent.Neighbor{Dev: n.Dev, IP: n.IP.String(), MAC: n.MAC.String()})
		}
	},
}

// neighbors renders every neighbor entry.
func (b *builder) neighbors() {
	for i := range b.in.Neighbors {
		n := &b.in.Neighbors[i]
		at := b.in.Locate(n.Origin, "neighbors", i)
		if _, ok := b.deviceRef(field(at, "dev"), n.Dev); !ok {
			continue
		}
		mac, _ := net.ParseMAC(n.MAC) // Validate checked it
		b.object(n.Drift, n.Origin)
		b.put(&items.Neighbor{Dev: n.Dev, IP: optAddr(n.IP), MAC: mac, Deps: append(b.portsOf(n.Dev), b.vrfPort(n.Dev)...)}, at)
	}
}

// portsOf returns the port items a neighbour on dev waits for: the
// declared ports of dev and, for a VLAN, of the interfaces below it, in name
// order. Enslaving a port can change a bond's or bridge's MAC (a bridge
// takes its lowest port's, a bond its first's), and a VLAN follows its
// parent's MAC; each change makes the kernel flush the device's
// neighbours, permanent ones too, so the neighbour is created after the
// ports. A MAC the intent sets stays, so it ends the walk.
func (b *builder) portsOf(dev string) []dg.ItemRef {
	var deps []dg.ItemRef
	for seen := map[string]bool{}; !seen[dev]; {
		seen[dev] = true
		ifc, ok := b.idx.ifaces[dev]
		if !ok || ifc.MAC != "" {
			break
		}
		for _, name := range b.idx.ports[dev] {
			deps = append(deps, dg.ItemRef{Type: items.TypePort, Name: name})
		}
		if ifc.Type != intent.LinkVLAN || ifc.VLAN == nil {
			break
		}
		dev = ifc.VLAN.Parent
	}
	return deps
}
