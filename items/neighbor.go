package items

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"slices"

	dg "github.com/netagent/netagent/depgraph"
)

// Neighbor is a permanent neighbour (ARP or NDP) entry. Its name is
// "<dev>/<ip>". A new MAC is a Modify (RTM_NEWNEIGH with NLM_F_REPLACE).
type Neighbor struct {
	Dev string
	IP  netip.Addr
	MAC net.HardwareAddr
	// Deps are further items that must exist first. The renderer lists the
	// ports of Dev when it is a bond or bridge: enslaving a port can change
	// the master's MAC, and the kernel then flushes the master's
	// neighbours, permanent ones too.
	Deps []dg.ItemRef
}

var _ dg.Item = (*Neighbor)(nil)

// Type returns TypeNeighbor.
func (n *Neighbor) Type() string { return TypeNeighbor }

// Name returns "<dev>/<ip>".
func (n *Neighbor) Name() string { return n.Dev + "/" + n.IP.String() }

// External returns false.
func (n *Neighbor) External() bool { return false }

// Dependencies: the interface, then Deps, the device's own Port among
// them (a vrf's port) recreating the neighbour when it is modified (see
// ownPortRecreates).
func (n *Neighbor) Dependencies() []dg.Dependency {
	return ownPortRecreates(extraDeps([]dg.Dependency{requires(InterfaceRef(n.Dev), "")}, n.Deps), n.Dev)
}

// Equal compares every field.
func (n *Neighbor) Equal(other dg.Item) bool {
	o, ok := other.(*Neighbor)
	return ok && o != nil && n.Dev == o.Dev && n.IP == o.IP && bytes.Equal(n.MAC, o.MAC) &&
		slices.Equal(n.Deps, o.Deps)
}

// String describes the entry in one line, `ip neigh` style.
func (n *Neighbor) String() string {
	return fmt.Sprintf("neighbor %s dev %s lladdr %s permanent", n.IP, n.Dev, n.MAC)
}
