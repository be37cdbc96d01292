package intent

// LinkIpvlan is the type of an ipvlan interface, whose section is "ipvlan".
const LinkIpvlan LinkType = "ipvlan"

// Ipvlan holds the settings of an ipvlan interface: {"type": "ipvlan",
// "ipvlan": {"parent": "eth0", "mode": "l2"}}. The section is required.
// Mode is l2, l3 (the default) or l3s, Flag bridge (the default), private
// or vepa. The kernel keeps the mode and the flag per parent: every ipvlan
// of one parent must say the same, and a parent carries macvlans or
// ipvlans, not both. An ipvlan has its parent's MAC (no mac of its own),
// is no bond or bridge port, carries no VLAN or macvlan, and its mtu
// cannot exceed its parent's when the intent gives both.
type Ipvlan struct {
	Parent string     `json:"parent"`
	Mode   IpvlanMode `json:"mode,omitempty"` // "": l3, the kernel's default
	Flag   IpvlanFlag `json:"flag,omitempty"` // "": bridge, the kernel's default
}

// ipvlanSection: required; the ipvlan sits on its parent, whose MTU it
// takes.
var ipvlanSection = linkSection{
	typ:      LinkIpvlan,
	required: true,
	present:  func(ifc *Interface) bool { return ifc.Ipvlan != nil },
	check:    (*checker).ipvlan,
	parent:   func(ifc *Interface) (string, int, string) { return ifc.Ipvlan.Parent, 0, "" },
	fixedMAC: "an ipvlan has the MAC address of its parent and cannot change it",
	notPort:  "an ipvlan takes no receive handler, which a bond or bridge port needs",
	uppers:   ipvlanUppers,
}

// IpvlanMode is an ipvlan's mode.
type IpvlanMode string

// The ipvlan modes.
const (
	IpvlanL2  IpvlanMode = "l2"
	IpvlanL3  IpvlanMode = "l3"
	IpvlanL3S IpvlanMode = "l3s"
)

var ipvlanModes = []IpvlanMode{IpvlanL2, IpvlanL3, IpvlanL3S}

// IpvlanFlag is an ipvlan's flag (IFLA_IPVLAN_FLAGS).
type IpvlanFlag string

// The ipvlan flags.
const (
	IpvlanBridge  IpvlanFlag = "bridge"
	IpvlanPrivate IpvlanFlag = "private"
	IpvlanVEPA    IpvlanFlag = "vepa"
)

var ipvlanFlags = []IpvlanFlag{IpvlanBridge, IpvlanPrivate, IpvlanVEPA}

// EffectiveMode returns the ipvlan mode, l3 when unset.
func (v *Ipvlan) EffectiveMode() IpvlanMode { return orDefault(v.Mode, IpvlanL3) }

// EffectiveFlag returns the ipvlan flag, bridge when unset.
func (v *Ipvlan) EffectiveFlag() IpvlanFlag { return orDefault(v.Flag, IpvlanBridge) }

// ipvlan checks an ipvlan's settings and what the kernel refuses around
// it: a parent that is lo, not Ethernet-like (another ipvlan: the kernel
// would put the new one on that one's parent), a bond or bridge port, or
// also the parent of macvlans (one receive handler per link); another
// mode or flag than the parent's other ipvlans. Being the parent of a VLAN
// or macvlan (NETIF_F_VLAN_CHALLENGED, IFF_NO_RX_HANDLER) is refused
// through the section's uppers; a MAC (the
// ipvlan has its parent's: no ndo_set_mac_address) and being a bond or
// bridge port (IFF_NO_RX_HANDLER) are refused through the section's
// fixedMAC and notPort.
func (c *checker) ipvlan(ifc *Interface, o Origin, _ map[string]Origin) {
	v := ifc.Ipvlan
	c.parent(ifc, o.field("parent"), v.Parent, true)
	c.notOnLoopback(o.field("parent"), v.Parent, "an ipvlan")
	c.macvlanParentNotPort(v.Parent, o.field("parent"))
	oneOf(c, o.field("mode"), v.Mode, ipvlanModes)
	oneOf(c, o.field("flag"), v.Flag, ipvlanFlags)
	if def, ok := c.links[v.Parent]; ok && !def.peer && def.ifc.Type == LinkIpvlan && v.Parent != ifc.Name {
		c.fail(o.field("parent"), "%q is an ipvlan: the kernel puts an ipvlan on an ipvlan on that one's parent; name %q's parent", v.Parent, v.Parent)
	}
	c.ipvlanSharers(ifc, o)
}

// ipvlanSharers compares ifc with the first other interface on its
// parent: a macvlan is refused, another ipvlan must have the same mode and
// flag.
func (c *checker) ipvlanSharers(ifc *Interface, o Origin) {
	for i := range c.in.Interfaces {
		other := &c.in.Interfaces[i]
		if other == ifc {
			continue
		}
		at := c.in.Locate(other.Origin, "interfaces", i)
		switch {
		case other.Macvlan != nil && other.Type == LinkMacvlan && other.Macvlan.Parent == ifc.Ipvlan.Parent:
			c.fail(o.field("parent"), "%q is also the parent of macvlan %q at %s: the kernel lets a link carry macvlans or ipvlans, not both",
				ifc.Ipvlan.Parent, other.Name, at.field("macvlan.parent"))
			return
		case other.Ipvlan == nil || other.Type != LinkIpvlan || other.Ipvlan.Parent != ifc.Ipvlan.Parent:
			continue
		case other.Ipvlan.EffectiveMode() != ifc.Ipvlan.EffectiveMode() || other.Ipvlan.EffectiveFlag() != ifc.Ipvlan.EffectiveFlag():
			c.fail(o.field("mode"), "mode %s flag %s differs from ipvlan %q at %s (mode %s flag %s): the kernel keeps one mode and flag for all the ipvlans of parent %q",
				ifc.Ipvlan.EffectiveMode(), ifc.Ipvlan.EffectiveFlag(), other.Name, at.field("ipvlan"),
				other.Ipvlan.EffectiveMode(), other.Ipvlan.EffectiveFlag(), ifc.Ipvlan.Parent)
		}
		return
	}
}

// ipvlanUppers are the types the kernel refuses on an ipvlan, and why.
var ipvlanUppers = map[LinkType]string{
	LinkVLAN:    "which cannot carry VLANs (the kernel marks it VLAN-challenged)",
	LinkMacvlan: "which cannot carry macvlans (it takes no receive handler)",
}
