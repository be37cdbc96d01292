package items

import (
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
)

// Port is the membership of an interface in a bond or a bridge. Its name is
// the port's interface name (an interface has at most one master).
//
// Moving a port to another master is a Modify (the configurator releases and
// enslaves again), never a recreate. Before enslaving into a bond the
// configurator sets the port down, as the kernel requires, and up again
// after.
type Port struct {
	IfName     string
	Master     string        // ifname of the bond or bridge
	MasterKind InterfaceKind // KindBond or KindBridge
	// Cost is the bridge port's STP path cost; 0 leaves the kernel's
	// (speed-derived) default. Bridge ports only.
	Cost uint32
}

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

// Equal compares every field.
func (p *Port) Equal(other dg.Item) bool {
	o, ok := other.(*Port)
	return ok && o != nil && *p == *o
}

// String describes the port in one line.
func (p *Port) String() string {
	s := fmt.Sprintf("port %s master %s (%s)", p.IfName, p.Master, p.MasterKind)
	if p.Cost != 0 {
		s += fmt.Sprintf(" cost %d", p.Cost)
	}
	return s
}
