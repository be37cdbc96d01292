package intent

// LinkBridge is the type of a bridge interface, whose section is "bridge".
const LinkBridge LinkType = "bridge"

// Bridge holds the settings of a bridge: {"type": "bridge", "bridge":
// {"stp": true}}. The section is optional (absent: the kernel's defaults).
// Its ports are the interfaces whose Master names it. ForwardDelay is in
// centiseconds (1500 is 15 seconds), as in ip-link and netlink, or a
// duration with its unit ("15s"), as show prints it. VLANs are
// the bridge's own VLAN membership, entries as in a port's bridgePort
// (see BridgePort), and need VLANFiltering.
type Bridge struct {
	STP           bool `json:"stp,omitempty"`
	VLANFiltering bool `json:"vlanFiltering,omitempty"`
	// ForwardDelay is in centiseconds, as in `ip link ... forward_delay`
	// and netlink (1500 is 15 seconds), or a duration with its unit
	// ("15s"). 0 leaves the kernel's default.
	ForwardDelay Centiseconds `json:"forwardDelay,omitzero"`
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

// bridge checks a bridge's settings. The forward delay is in centiseconds
// (or a duration); with STP on, the kernel takes only 2 to 30 seconds.
func (c *checker) bridge(b *Bridge, o Origin) {
	fd, at := b.ForwardDelay, o.field("forwardDelay")
	switch {
	case fd.IsZero():
	case !checkDuration(c, at, fd, 0, 3000):
	case fd.Centi() == 0:
	case b.STP && (fd.Centi() < 200 || fd.Centi() > 3000):
		if fd.Text != "" {
			c.fail(at, "%s is out of range 2s-30s with stp on", fd)
			return
		}
		c.fail(at, "%d is out of range 200-3000 (centiseconds) with stp on", fd.Count)
	}
}
