package intent

import "fmt"

// LinkVRF is the type of a vrf interface, whose section is "vrf".
const LinkVRF LinkType = "vrf"

// VRF holds the settings of a vrf interface: {"type": "vrf", "vrf":
// {"table": 10}} (or a table's name, as routes take), the routing table of the interfaces enslaved to it
// (those naming it as their master). The section is required. Routes with
// that table over its ports are the vrf's routes. The table is the vrf's
// own: not 0, 253, 254 or 255, nor another vrf's. A vrf is no port of a
// bond, bridge or vrf, lo is no port of a vrf, no VLAN, macvlan or ipvlan
// sits on a vrf, and a vrf's mtu is 1280 or more.
type VRF struct {
	Table TableID `json:"table"` // a name in JSON (TableID)
}

// vrfSection: required; a vrf is a master, takes no receive handler (no
// bond or bridge port) and has an MTU of 1280 to 65575 (vrf_setup's
// min_mtu and max_mtu, IPV6_MIN_MTU and IP6_MAX_MTU, which is also the
// MTU it starts with, and `netagent show` reports).
var vrfSection = linkSection{
	typ:      LinkVRF,
	required: true,
	present:  func(ifc *Interface) bool { return ifc.VRF != nil },
	check:    (*checker).vrf,
	master:   true,
	notPort:  "a vrf takes no receive handler, which a bond or bridge port needs",
	minMTU:   1280,
	maxMTU:   65575,
	uppers:   vrfUppers,
}

// reservedTables are the tables a vrf cannot take: unspec (vrf_newlink
// refuses 0) and the kernel's own default, main and local.
var reservedTables = map[uint32]string{0: "unspec", 253: "default", 254: "main", 255: "local"}

// vrf checks a vrf's table: not reserved, and no other vrf's (the kernel
// lets vrfs share a table unless net.vrf.strict_mode is on, but their
// routes would mix). No VLAN, macvlan or ipvlan sits on it (uppers).
func (c *checker) vrf(ifc *Interface, o Origin, unique map[string]Origin) {
	t := uint32(ifc.VRF.Table)
	if name, ok := reservedTables[t]; ok {
		c.fail(o.field("table"), "%d is the %s table; a vrf needs a table of its own (1-252, 256-4294967295)", t, name)
		return
	}
	c.unique(unique, fmt.Sprintf("vrf table %d", t), o.field("table"))
}

// vrfUppers are the types the kernel refuses on a vrf, and why: a vrf is
// VLAN-challenged (vrf_setup) and takes no receive handler, which macvlans
// and ipvlans need.
var vrfUppers = map[LinkType]string{
	LinkVLAN:    "which cannot carry VLANs (the kernel marks it VLAN-challenged)",
	LinkMacvlan: "which cannot carry macvlans (it takes no receive handler)",
	LinkIpvlan:  "which cannot carry ipvlans (it takes no receive handler)",
}
