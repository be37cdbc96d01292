package intent

import (
	"fmt"
	"strconv"
	"strings"
)

// BridgePort holds the settings of an interface as a port of the bridge
// its Master names (`bridge link set ... cost/priority`, `bridge vlan ...
// master`; networkd's [Bridge] Cost=/Priority= and [BridgeVLAN]).
type BridgePort struct {
	Cost     int  `json:"cost,omitempty"`     // STP path cost 1-65535; 0: the kernel's
	Priority *int `json:"priority,omitempty"` // STP port priority 0-63; absent: the kernel's
	// VLANs is the port's whole VLAN membership; absent, the kernel's
	// default (the bridge's default_pvid, 1, as PVID and egress untagged);
	// [] no VLAN at all.
	VLANs []BridgeVLAN `json:"vlans,omitzero"`
}

// BridgeVLAN is one VLAN, or a range of VLANs, of a bridge member: VID
// (1-4094) or VIDs ("20-30"). PVID: untagged ingress frames belong to it
// (one VID per member, not a range). Untagged: frames leave untagged
// (the "access" VLAN when it is also the PVID; tagged otherwise: "trunk").
type BridgeVLAN struct {
	VID      int    `json:"vid,omitempty"`
	VIDs     string `json:"vids,omitempty"`
	PVID     bool   `json:"pvid,omitempty"`
	Untagged bool   `json:"untagged,omitempty"`
}

// The VLAN IDs a bridge member takes.
const (
	minVID = 1
	maxVID = 4094
)

// Range returns the VLANs v covers, From..To; ok is false when v is not
// well formed (see Validate).
func (v BridgeVLAN) Range() (from, to int, ok bool) {
	if v.VIDs == "" {
		return v.VID, v.VID, v.VID >= minVID && v.VID <= maxVID
	}
	if v.VID != 0 {
		return 0, 0, false
	}
	a, b, found := strings.Cut(v.VIDs, "-")
	from, errA := strconv.Atoi(a)
	to, errB := from, error(nil)
	if found {
		to, errB = strconv.Atoi(b)
	}
	ok = errA == nil && errB == nil && from >= minVID && from <= to && to <= maxVID
	return from, to, ok
}

// bridgeMembership checks an interface's bridgePort section and a bridge's
// own VLANs: the port must be a bridge's, VLANs need the bridge's VLAN
// filtering (without it the kernel keeps the membership but forwards every
// VLAN everywhere, so declaring one would only hide a mistake).
func (c *checker) bridgeMembership(ifc *Interface, at Origin) {
	if ifc.Type == LinkBridge && ifc.Bridge != nil && ifc.Bridge.VLANs != nil {
		o := at.field("bridge").field("vlans")
		if !ifc.Bridge.VLANFiltering {
			c.fail(o, "needs vlanFiltering: true on bridge %q (without it the bridge forwards every VLAN)", ifc.Name)
		}
		c.bridgeVLANs(ifc.Bridge.VLANs, o)
	}
	if ifc.BridgePort == nil {
		return
	}
	o := at.field("bridgePort")
	bridge, ok := c.portBridge(ifc, o)
	bp := ifc.BridgePort
	if bp.Cost != 0 {
		c.inRange(o.field("cost"), bp.Cost, 1, 65535)
	}
	if bp.Priority != nil {
		c.inRange(o.field("priority"), *bp.Priority, 0, 63)
	}
	if bp.VLANs == nil {
		return
	}
	if ok && (bridge.Bridge == nil || !bridge.Bridge.VLANFiltering) {
		c.fail(o.field("vlans"), "needs vlanFiltering: true on bridge %q (without it the bridge forwards every VLAN)", ifc.Master)
	}
	c.bridgeVLANs(bp.VLANs, o.field("vlans"))
}

// portBridge returns the bridge ifc is a port of, failing at o when its
// master is not a bridge of the intent.
func (c *checker) portBridge(ifc *Interface, o Origin) (*Interface, bool) {
	if ifc.Master == "" {
		c.fail(o, "only for a bridge port: %q has no master", ifc.Name)
		return nil, false
	}
	def, ok := c.links[ifc.Master]
	switch {
	case !ok:
		return nil, false // master reports it
	case def.peer || def.ifc.Type != LinkBridge:
		c.fail(o, "only for a bridge port: master %q is %s", ifc.Master, def.describe())
		return nil, false
	}
	return def.ifc, true
}

// bridgeVLANs checks one member's VLAN list: each entry well formed, no
// VLAN listed twice, at most one PVID.
func (c *checker) bridgeVLANs(vlans []BridgeVLAN, o Origin) {
	type seen struct {
		from, to int
		at       Origin
	}
	var taken []seen
	var pvid *Origin
	for i, v := range vlans {
		at := o.index(i)
		from, to, ok := c.bridgeVLAN(v, at)
		if !ok {
			continue
		}
		for _, s := range taken {
			if from <= s.to && s.from <= to {
				c.fail(at, "overlaps %s (%d-%d)", s.at.Path, s.from, s.to)
			}
		}
		taken = append(taken, seen{from, to, at})
		if v.PVID {
			if pvid != nil {
				c.fail(at.field("pvid"), "a second pvid (the first is %s): a member has one", pvid.Path)
				continue
			}
			pvid = &at
		}
	}
}

// bridgeVLAN checks one entry and returns its range.
func (c *checker) bridgeVLAN(v BridgeVLAN, at Origin) (from, to int, ok bool) {
	switch {
	case v.VID != 0 && v.VIDs != "":
		c.fail(at, "vid and vids exclude each other")
		return 0, 0, false
	case v.VID == 0 && v.VIDs == "":
		c.fail(at, "needs vid (1-4094) or vids (\"20-30\")")
		return 0, 0, false
	case v.VIDs == "":
		ok = c.inRange(at.field("vid"), v.VID, minVID, maxVID)
		return v.VID, v.VID, ok
	}
	if from, to, ok = v.Range(); !ok {
		c.fail(at.field("vids"), "%q is not a range \"from-to\" within %d-%d", v.VIDs, minVID, maxVID)
		return 0, 0, false
	}
	if v.PVID && from != to {
		c.fail(at.field("pvid"), "the pvid is one vid, not the range %q", v.VIDs)
	}
	return from, to, true
}

// String gives the entry as `bridge vlan` would: "10 pvid untagged".
func (v BridgeVLAN) String() string {
	s := v.VIDs
	if s == "" {
		s = fmt.Sprint(v.VID)
	}
	if v.PVID {
		s += " pvid"
	}
	if v.Untagged {
		s += " untagged"
	}
	return s
}
