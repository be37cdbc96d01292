package items

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"

	dg "github.com/netagent/netagent/depgraph"
)

// Neighbor is a permanent neighbour (ARP or NDP) entry. Its name is
// "<dev>/<ip>". A new MAC is a Modify (RTM_NEWNEIGH with NLM_F_REPLACE).
type Neighbor struct {
	Dev string
	IP  netip.Addr
	MAC net.HardwareAddr
}

var _ dg.Item = (*Neighbor)(nil)

// Type returns TypeNeighbor.
func (n *Neighbor) Type() string { return TypeNeighbor }

// Name returns "<dev>/<ip>".
func (n *Neighbor) Name() string { return n.Dev + "/" + n.IP.String() }

// External returns false.
func (n *Neighbor) External() bool { return false }

// Dependencies: the interface.
func (n *Neighbor) Dependencies() []dg.Dependency {
	return []dg.Dependency{requires(InterfaceRef(n.Dev), "")}
}

// Equal compares every field.
func (n *Neighbor) Equal(other dg.Item) bool {
	o, ok := other.(*Neighbor)
	return ok && o != nil && n.Dev == o.Dev && n.IP == o.IP && bytes.Equal(n.MAC, o.MAC)
}

// String describes the entry in one line, `ip neigh` style.
func (n *Neighbor) String() string {
	return fmt.Sprintf("neighbor %s dev %s lladdr %s permanent", n.IP, n.Dev, n.MAC)
}
