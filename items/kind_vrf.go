package items

import (
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
)

// KindVRF is the kind of a VRF (an l3mdev master with its routing table).
const KindVRF InterfaceKind = "vrf"

// VRFAttrs are the settings of a vrf interface (required): the routing
// table its ports' routes go to. Ports are enslaved to it like a bridge's
// (a Port with MasterKind KindVRF).
type VRFAttrs struct {
	Table uint32
}

// Kind returns KindVRF.
func (a *VRFAttrs) Kind() InterfaceKind { return KindVRF }

// Equal compares the settings.
func (a *VRFAttrs) Equal(other KindAttrs) bool { return sameAttrs(a, other) }

// NeedsRecreate: another table. vrf_link_ops has no changelink: the table
// is fixed at vrf_newlink.
func (a *VRFAttrs) NeedsRecreate(old KindAttrs) bool {
	return oldAttrs[VRFAttrs](old).Table != a.Table
}

// Dependencies returns none.
func (a *VRFAttrs) Dependencies(string) []dg.Dependency { return nil }

// ConflictKeys returns "vrf table <table>": with net.vrf.strict_mode on,
// vrf_map_register_dev refuses a second vrf of a table (EBUSY), so a vrf
// renamed or replaced keeping its table is created after the old one is
// deleted.
func (a *VRFAttrs) ConflictKeys(string) []string {
	return []string{fmt.Sprintf("vrf table %d", a.Table)}
}

// Problem checks the table: not 0 (RT_TABLE_UNSPEC, which vrf_newlink
// refuses), nor local, main or default, which the host's own routing
// uses.
func (a *VRFAttrs) Problem(string) string {
	switch a.Table {
	case 0, 253, 254, 255:
		return fmt.Sprintf("vrf table %d is reserved", a.Table)
	}
	return ""
}

// String describes the settings.
func (a *VRFAttrs) String() string { return joinSet("table", a.Table) }
