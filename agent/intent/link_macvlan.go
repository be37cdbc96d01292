package intent

// LinkMacvlan is the type of a macvlan interface, whose section is "macvlan".
const LinkMacvlan LinkType = "macvlan"

// Macvlan holds the settings of a macvlan interface: {"type": "macvlan",
// "macvlan": {"parent": "eth0", "mode": "bridge"}}. The section is
// required. The parent cannot be a bond or bridge port (the kernel gives a
// link to one of them), nor lo, nor carry ipvlans too (see Ipvlan); the
// macvlan's mtu cannot exceed its parent's when the intent gives both.
type Macvlan struct {
	Parent string      `json:"parent"`
	Mode   MacvlanMode `json:"mode,omitempty"` // "": vepa, the kernel's default
}

// macvlanSection: required; the macvlan sits on its parent.
var macvlanSection = linkSection{
	typ:      LinkMacvlan,
	required: true,
	present:  func(ifc *Interface) bool { return ifc.Macvlan != nil },
	check:    (*checker).macvlan,
	parent:   func(ifc *Interface) (string, int, string) { return ifc.Macvlan.Parent, 0, "" },
}

// macvlan checks a macvlan's settings.
func (c *checker) macvlan(ifc *Interface, o Origin, _ map[string]Origin) {
	c.parent(ifc, o.field("parent"), ifc.Macvlan.Parent, true)
	c.notOnLoopback(o.field("parent"), ifc.Macvlan.Parent, "a macvlan")
	c.macvlanParentNotPort(ifc.Macvlan.Parent, o.field("parent"))
	oneOf(c, o.field("mode"), ifc.Macvlan.Mode, macvlanModes)
}

// MacvlanMode is a macvlan's mode.
type MacvlanMode string

// The macvlan modes.
const (
	MacvlanPrivate  MacvlanMode = "private"
	MacvlanVEPA     MacvlanMode = "vepa"
	MacvlanBridge   MacvlanMode = "bridge"
	MacvlanPassthru MacvlanMode = "passthru"
	MacvlanSource   MacvlanMode = "source"
)

var macvlanModes = []MacvlanMode{MacvlanPrivate, MacvlanVEPA, MacvlanBridge, MacvlanPassthru, MacvlanSource}

// EffectiveMode returns the macvlan mode, vepa when unset.
func (m *Macvlan) EffectiveMode() MacvlanMode { return orDefault(m.Mode, MacvlanVEPA) }

// macvlanParentNotPort rejects a macvlan on a bond or bridge port: a link
// has one receive handler, which the bond or bridge, or the macvlans, take
// (the kernel answers "device or resource busy", for ever).
func (c *checker) macvlanParentNotPort(parent string, o Origin) {
	if def, ok := c.links[parent]; ok && !def.peer && def.ifc.Master != "" {
		c.fail(o, "%q is a port of %q: the kernel lets a link be a bond or bridge port or the parent of macvlans, not both",
			parent, def.ifc.Master)
	}
}
