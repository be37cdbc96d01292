package intent

// LinkBridge is the type of a bridge interface, whose section is "bridge".
const LinkBridge LinkType = "bridge"

// Bridge holds the settings of a bridge: {"type": "bridge", "bridge":
// {"stp": true}}. The section is optional (absent: the kernel's defaults).
// Its ports are the interfaces whose Master names it. ForwardDelay is in
// centiseconds (1500 is 15 seconds), as in ip-link and netlink. VLANs are
// the bridge's own VLAN membership, entries as in a port's bridgePort
// (see BridgePort), and need VLANFiltering.
type Bridge struct {
	STP           bool `json:"stp,omitempty"`
	VLANFiltering bool `json:"vlanFiltering,omitempty"`
	// ForwardDelay is in centiseconds, as in `ip link ... forward_delay`
	// and netlink: 1500 is 15 seconds. 0 leaves the kernel's default.
	ForwardDelay int `json:"forwardDelay,omitempty"`
	// VLANs is the bridge's own membership (`bridge vlan ... self`), which
	// the host needs to talk on a VLAN with vlanFiltering; see BridgePort.
	VLANs []BridgeVLAN `json:"vlans,omitzero"`
}

// bridgeSection: optional (all defaults).
var bridgeSection = linkSection{
	typ:     LinkBridge,
	present: func(ifc *Interface) bool { return ifc.Bridge != nil },
	check:   func(c *checker, ifc *Interface, o Origin, _ map[string]Origin) { c.bridge(ifc.Bridge, o) },
	master:  true,
}

// bridge checks a bridge's settings. The forward delay is in centiseconds;
// with STP on, the kernel takes only 2 to 30 seconds.
func (c *checker) bridge(b *Bridge, o Origin) {
	fd := b.ForwardDelay
	switch {
	case fd == 0:
	case b.STP && (fd < 200 || fd > 3000):
		c.fail(o.field("forwardDelay"), "%d is out of range 200-3000 (centiseconds) with stp on", fd)
	default:
		c.inRange(o.field("forwardDelay"), fd, 0, 3000)
	}
}
