package intent

import (
	"fmt"
)

// LinkVLAN is the type of a vlan interface, whose section is "vlan".
const LinkVLAN LinkType = "vlan"

// VLAN holds the settings of an 802.1Q or 802.1ad VLAN interface:
// {"type": "vlan", "vlan": {"parent": "eth0", "id": 10}}. The section is
// required. lo cannot be a VLAN's parent, two VLANs cannot share protocol,
// id and parent, and a VLAN's mtu cannot exceed its parent's when the
// intent gives both.
type VLAN struct {
	Parent   string       `json:"parent"`
	ID       int          `json:"id"`                 // 1-4094
	Protocol VLANProtocol `json:"protocol,omitempty"` // "": 802.1q
}

// vlanSection: required; the VLAN sits on its parent, and no two VLANs
// share parent, protocol and id.
var vlanSection = linkSection{
	typ:      LinkVLAN,
	required: true,
	present:  func(ifc *Interface) bool { return ifc.VLAN != nil },
	check:    (*checker).vlan,
	parent:   func(ifc *Interface) (string, int, string) { return ifc.VLAN.Parent, 0, "" },
}

// VLANProtocol is a VLAN's tag protocol.
type VLANProtocol string

// The VLAN protocols.
const (
	VLAN8021Q  VLANProtocol = "802.1q"
	VLAN8021AD VLANProtocol = "802.1ad"
)

var vlanProtos = []VLANProtocol{VLAN8021Q, VLAN8021AD}

// EffectiveProtocol returns the VLAN protocol, 802.1q when unset.
func (v *VLAN) EffectiveProtocol() VLANProtocol { return orDefault(v.Protocol, VLAN8021Q) }

// vlan checks a VLAN's settings, and that no other VLAN has the same parent,
// protocol and id.
func (c *checker) vlan(ifc *Interface, o Origin, seen map[string]Origin) {
	v := ifc.VLAN
	c.parent(ifc, o.field("parent"), v.Parent, true)
	c.notOnLoopback(o.field("parent"), v.Parent, "a VLAN")
	idOK := c.inRange(o.field("id"), v.ID, 1, 4094)
	protoOK := oneOf(c, o.field("protocol"), v.Protocol, vlanProtos)
	if idOK && protoOK && v.Parent != "" {
		key := fmt.Sprintf("%s VLAN %d on %q", v.EffectiveProtocol(), v.ID, v.Parent)
		c.unique(seen, key, o.field("id"))
	}
}
