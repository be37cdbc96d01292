package items

import (
	"fmt"
	"slices"

	dg "github.com/netagent/netagent/depgraph"
)

// KindVLAN is the kind of an 802.1Q or 802.1ad VLAN on a parent.
const KindVLAN InterfaceKind = "vlan"

// VLANAttrs are the settings of an 802.1Q/802.1ad VLAN interface
// (required).
type VLANAttrs struct {
	Parent   string // ifname of the lower interface
	ID       uint16 // 1..4094
	Protocol string // "802.1q" (also "") or "802.1ad", as netlink spells them
}

// VLANDefaultProtocol is the protocol of a VLAN created without one.
const VLANDefaultProtocol = "802.1q"

var vlanProtocols = []string{"", "802.1q", "802.1ad"}

// Kind returns KindVLAN.
func (a *VLANAttrs) Kind() InterfaceKind { return KindVLAN }

// Equal compares the settings.
func (a *VLANAttrs) Equal(other KindAttrs) bool { return sameAttrs(a, other) }

// identity is what the kernel fixes at creation, with the default protocol
// spelled out.
func (a VLANAttrs) identity() VLANAttrs {
	if a.Protocol == "" {
		a.Protocol = VLANDefaultProtocol
	}
	return a
}

// NeedsRecreate: vlan_changelink only changes flags and QoS maps, so any
// change of parent, ID or protocol needs a new VLAN.
func (a *VLANAttrs) NeedsRecreate(old KindAttrs) bool {
	return oldAttrs[VLANAttrs](old).identity() != a.identity()
}

// Dependencies: the parent interface.
func (a *VLANAttrs) Dependencies(string) []dg.Dependency {
	return []dg.Dependency{requires(InterfaceRef(a.Parent), "parent")}
}

// ConflictKeys: "vlan <parent> <protocol> <id>", which the kernel keeps
// unique.
func (a *VLANAttrs) ConflictKeys(string) []string {
	v := a.identity()
	return []string{fmt.Sprintf("vlan %s %s %d", v.Parent, v.Protocol, v.ID)}
}

// Problem checks the parent, the ID and the protocol.
func (a *VLANAttrs) Problem(self string) string {
	switch {
	case !validIfName(a.Parent) || a.Parent == self:
		return "bad vlan parent " + a.Parent
	case a.ID < 1 || a.ID > 4094:
		return "vlan id out of 1..4094"
	case !slices.Contains(vlanProtocols, a.Protocol):
		return "unknown vlan protocol " + a.Protocol
	}
	return ""
}

// String describes the settings.
func (a *VLANAttrs) String() string {
	return joinSet("parent", a.Parent, "id", a.ID, "protocol", a.Protocol)
}
