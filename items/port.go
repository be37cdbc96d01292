package items

import (
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
)

// Port is the membership of an interface in a bond, a bridge or a vrf. Its
// name is the port's interface name (an interface has at most one master).
//
// Moving a port to another master is a Modify (the configurator releases and
// enslaves again), never a recreate. Before enslaving into a bond the
// configurator sets the port down, as the kernel requires, and up again
// after. Enslaving into a vrf, or releasing from one, the kernel cycles
// the port itself (cycle_netdev), which flushes its routes, neighbours
// and IPv6 addresses: the renderer makes those of a vrf's port wait for
// the Port.
type Port struct {
	IfName     string
	Master     string        // ifname of the bond, bridge or vrf
	MasterKind InterfaceKind // KindBond, KindBridge or KindVRF (see TakesPorts)
	// Cost is the bridge port's STP path cost (1-65535); 0 leaves the
	// kernel's value (speed-derived for a new port). Bridge ports only.
	Cost uint32
	// Priority is the bridge port's STP priority (0-63); nil leaves the
	// kernel's value (32 for a new port). Bridge ports only.
	Priority *uint16
}

// The kernel's limits of a bridge port's cost and priority
// (BR_MIN_PATH_COST, BR_MAX_PATH_COST, BR_MAX_PORT_PRIORITY).
const (
	MinPortCost     = 1
	MaxPortCost     = 65535
	MaxPortPriority = 63
)

var _ dg.Item = (*Port)(nil)

// Type returns TypePort.
func (p *Port) Type() string { return TypePort }

// Name returns the port's interface name.
func (p *Port) Name() string { return p.IfName }

// External returns false.
func (p *Port) External() bool { return false }

// Dependencies: the master interface and the port's own interface.
func (p *Port) Dependencies() []dg.Dependency {
	return []dg.Dependency{
		requires(InterfaceRef(p.Master), "master"),
		requires(InterfaceRef(p.IfName), "port"),
	}
}

// Equal compares every field (the priority by value).
func (p *Port) Equal(other dg.Item) bool {
	o, ok := other.(*Port)
	return ok && o != nil && p.IfName == o.IfName && p.Master == o.Master &&
		p.MasterKind == o.MasterKind && p.Cost == o.Cost && ptrEqual(p.Priority, o.Priority)
}

// String describes the port in one line.
func (p *Port) String() string {
	s := fmt.Sprintf("port %s master %s (%s)", p.IfName, p.Master, p.MasterKind)
	if p.Cost != 0 {
		s += fmt.Sprintf(" cost %d", p.Cost)
	}
	if p.Priority != nil {
		s += fmt.Sprintf(" priority %d", *p.Priority)
	}
	return s
}

// bridgeProblem checks a bridge port's cost and priority against the
// kernel's limits (ERANGE otherwise), and that a bond port has neither.
func (p *Port) bridgeProblem() error {
	switch {
	case p.Priority != nil && p.MasterKind != KindBridge:
		return invalid(p, "priority on a bond port")
	case p.Cost > MaxPortCost:
		return invalid(p, "cost %d is not %d-%d", p.Cost, MinPortCost, MaxPortCost)
	case p.Priority != nil && *p.Priority > MaxPortPriority:
		return invalid(p, "priority %d is not 0-%d", *p.Priority, MaxPortPriority)
	}
	return nil
}
