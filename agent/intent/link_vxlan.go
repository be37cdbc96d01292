package intent

import (
	"fmt"

	"github.com/netagent/netagent/items"
)

// LinkVXLAN is the type of a vxlan interface, whose section is "vxlan".
const LinkVXLAN LinkType = "vxlan"

// VXLAN holds the settings of a VXLAN interface: {"type": "vxlan",
// "vxlan": {"vni": 100, "remote": "192.0.2.2"}}. The section is required.
// Remote (unicast) and Group (multicast) exclude each other; with neither,
// the forwarding database is left to learning or to someone else. Two
// VXLANs cannot share family, VNI, port and parent, and a VXLAN's mtu
// cannot exceed its parent's less 50 (IPv4) or 70 (IPv6) when the intent
// gives both.
type VXLAN struct {
	VNI      int    `json:"vni"` // 1-16777215
	Local    string `json:"local,omitempty"`
	Remote   string `json:"remote,omitempty"`
	Group    string `json:"group,omitempty"`
	Port     int    `json:"port,omitempty"` // UDP; 0: 4789
	Parent   string `json:"parent,omitempty"`
	Learning *bool  `json:"learning,omitempty"` // nil: true
}

// vxlanSection: required; the VXLAN may sit on a parent, whose MTU less
// the VXLAN header bounds its own, and no two VXLANs share family, VNI,
// port and parent.
var vxlanSection = linkSection{
	typ:      LinkVXLAN,
	required: true,
	present:  func(ifc *Interface) bool { return ifc.VXLAN != nil },
	check:    (*checker).vxlan,
	parent:   vxlanParent,
}

// vxlanParent returns the VXLAN's parent and the header the kernel takes
// from its MTU.
func vxlanParent(ifc *Interface) (string, int, string) {
	if vxlanIPv6(ifc.VXLAN) {
		return ifc.VXLAN.Parent, 70, " less the IPv6 VXLAN header (70)"
	}
	return ifc.VXLAN.Parent, 50, " less the IPv4 VXLAN header (50)"
}

// EffectivePort returns the UDP port, DefaultVXLANPort when unset.
func (v *VXLAN) EffectivePort() int { return orDefault(v.Port, DefaultVXLANPort) }

// EffectiveLearning reports whether the VXLAN learns remote MAC addresses
// (true unless Learning is false).
func (v *VXLAN) EffectiveLearning() bool { return v.Learning == nil || *v.Learning }

// vxlanIPv6 reports whether a VXLAN's addresses are IPv6.
func vxlanIPv6(v *VXLAN) bool {
	for _, s := range []string{v.Local, v.Remote, v.Group} {
		if f := addrFamily(s); f != "" {
			return f == FamilyIPv6
		}
	}
	return false
}

// vxlan checks a VXLAN's settings.
func (c *checker) vxlan(ifc *Interface, o Origin, seen map[string]Origin) {
	v := ifc.VXLAN
	vniOK := c.inRange(o.field("vni"), v.VNI, 1, 1<<24-1)
	portOK := c.inRange(o.field("port"), v.Port, 0, 65535)
	c.parent(ifc, o.field("parent"), v.Parent, false)
	claims := []famClaim{c.vxlanAddr(o, "local", v.Local, false)}
	if v.Remote != "" && v.Group != "" {
		c.fail(o.field("group"), "not allowed together with remote")
	} else {
		claims = append(claims, c.vxlanAddr(o, "remote", v.Remote, false), c.vxlanAddr(o, "group", v.Group, true))
	}
	if c.agree(o, claims...) && vniOK && portOK {
		c.unique(seen, vxlanKey(v, claims), o.field("vni"))
	}
}

// vxlanKey is what the kernel keeps unique among the VXLANs of a namespace
// (vxlan_vni_in_use): the family, the VNI, the UDP port and the parent
// link. A second VXLAN with the same is refused ("file exists").
func vxlanKey(v *VXLAN, claims []famClaim) string {
	fam := FamilyIPv4
	for _, cl := range claims {
		if cl.fam != "" {
			fam = cl.fam
			break
		}
	}
	key := fmt.Sprintf("%s VXLAN %d on UDP port %d", famName(fam), v.VNI, v.EffectivePort())
	if v.Parent != "" {
		key += fmt.Sprintf(" over %q", v.Parent)
	}
	return key
}

// vxlanAddr checks one of a VXLAN's addresses, if set: unicast, or multicast
// for the group.
func (c *checker) vxlanAddr(o Origin, field, s string, multicast bool) famClaim {
	if s == "" {
		return famClaim{}
	}
	a, ok := c.addr(o.field(field), s)
	switch {
	case !ok:
		return famClaim{}
	case multicast && !a.IsMulticast():
		c.fail(o.field(field), "%s is not a multicast address", a)
		return famClaim{}
	case !multicast && !items.IsUnicast(a):
		c.fail(o.field(field), "%s is not a unicast address", a)
		return famClaim{}
	}
	return famClaim{field: field, text: s, fam: familyOf(a)}
}
