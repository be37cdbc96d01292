package items

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	dg "github.com/netagent/netagent/depgraph"
)

// TypeBridgeVLANs is the item type of a bridge member's VLAN membership.
const TypeBridgeVLANs = "bridge-vlans"

// BridgeVLANs is the VLAN membership (`bridge vlan`) of one member of a
// bridge netagent owns: a port (IfName a port of Bridge, `bridge vlan ...
// master`), or the bridge itself (IfName == Bridge, `bridge vlan ...
// self`: the host's own port into the bridge, which with VLAN filtering on
// needs membership for the host to send and receive on a VLAN). Its name is
// IfName.
//
// The item holds the whole set: the configurator adds what is missing,
// deletes what is extra and changes flags in place, so that the kernel
// holds exactly VLANs. Without the item the member has the kernel's
// default membership (the bridge's default_pvid, normally 1, as PVID and
// egress untagged; none when default_pvid is 0), which is what a new port
// gets: deleting the item gives that default back. It is never recreated.
type BridgeVLANs struct {
	IfName string
	Bridge string
	VLANs  VLANSet
}

var _ dg.Item = (*BridgeVLANs)(nil)

// Type returns TypeBridgeVLANs.
func (b *BridgeVLANs) Type() string { return TypeBridgeVLANs }

// Name returns the member's interface name.
func (b *BridgeVLANs) Name() string { return b.IfName }

// External returns false.
func (b *BridgeVLANs) External() bool { return false }

// Self reports whether the item is the bridge's own membership.
func (b *BridgeVLANs) Self() bool { return b.IfName == b.Bridge }

// Dependencies: the bridge for its own membership; for a port, the port
// item while it is a port of Bridge (a port moving to another bridge loses
// its VLANs in the kernel, and its item then changes Bridge too).
func (b *BridgeVLANs) Dependencies() []dg.Dependency {
	if b.Self() {
		return []dg.Dependency{requires(InterfaceRef(b.Bridge), "bridge")}
	}
	bridge := b.Bridge
	return []dg.Dependency{{
		RequiredItem: dg.ItemRef{Type: TypePort, Name: b.IfName},
		Description:  "port of bridge " + bridge,
		MustSatisfy: func(required dg.Item) bool {
			p, ok := required.(*Port)
			return ok && p != nil && p.Master == bridge
		},
	}}
}

// Equal compares the member, the bridge and the VLAN set.
func (b *BridgeVLANs) Equal(other dg.Item) bool {
	o, ok := other.(*BridgeVLANs)
	return ok && o != nil && b.IfName == o.IfName && b.Bridge == o.Bridge && slices.Equal(b.VLANs, o.VLANs)
}

// String describes the membership in one line.
func (b *BridgeVLANs) String() string {
	who := "port " + b.IfName + " of " + b.Bridge
	if b.Self() {
		who = "bridge " + b.Bridge + " self"
	}
	return fmt.Sprintf("vlans of %s: %s", who, b.VLANs)
}

// Validate checks the names and the set (see VLANSet.Problem).
func (b *BridgeVLANs) Validate() error {
	switch {
	case !validIfName(b.IfName):
		return invalid(b, "bad interface name %q", b.IfName)
	case !validIfName(b.Bridge):
		return invalid(b, "bad bridge %q", b.Bridge)
	}
	if reason := b.VLANs.Problem(); reason != "" {
		return invalid(b, "%s", reason)
	}
	return nil
}

// The VLAN IDs a bridge accepts (1-4094: 0 and 4095 are reserved).
const (
	MinVID = 1
	MaxVID = 4094
)

// VLANRange is From..To (inclusive) with the same flags. PVID: untagged
// ingress frames go to this VLAN (a single VID only). Untagged: egress
// frames leave untagged.
type VLANRange struct {
	From, To uint16
	PVID     bool
	Untagged bool
}

// String gives "10", "20-30", with " pvid" and " untagged".
func (r VLANRange) String() string {
	s := fmt.Sprint(r.From)
	if r.To != r.From {
		s += fmt.Sprintf("-%d", r.To)
	}
	if r.PVID {
		s += " pvid"
	}
	if r.Untagged {
		s += " untagged"
	}
	return s
}

// VLANSet is a set of VLANs in canonical form (see CanonicalVLANs): sorted,
// not overlapping, adjacent ranges of the same flags merged, so that equal
// sets are equal slices.
type VLANSet []VLANRange

// String joins the ranges with ", "; "none" for the empty set.
func (s VLANSet) String() string {
	if len(s) == 0 {
		return "none"
	}
	parts := make([]string, len(s))
	for i, r := range s {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

// VLANFlags are one VID's flags.
type VLANFlags struct{ PVID, Untagged bool }

// Each calls f for every VID of the set, in order.
func (s VLANSet) Each(f func(vid uint16, fl VLANFlags)) {
	for _, r := range s {
		for v := uint32(r.From); v <= uint32(r.To); v++ {
			f(uint16(v), VLANFlags{r.PVID, r.Untagged})
		}
	}
}

// Map returns the set as one entry per VID.
func (s VLANSet) Map() map[uint16]VLANFlags {
	m := map[uint16]VLANFlags{}
	s.Each(func(vid uint16, fl VLANFlags) { m[vid] = fl })
	return m
}

// Problem says what is wrong with a set that is not canonical or not what
// the kernel accepts: a VID outside 1-4094, a range From > To, a PVID on a
// range, more than one PVID, overlapping or unsorted ranges. "" when fine.
func (s VLANSet) Problem() string {
	pvids := 0
	for i, r := range s {
		switch {
		case r.From < MinVID || r.To > MaxVID || r.From > r.To:
			return fmt.Sprintf("bad vlan range %d-%d (vids are %d-%d)", r.From, r.To, MinVID, MaxVID)
		case r.PVID && r.From != r.To:
			return fmt.Sprintf("pvid on range %s: the pvid is one vid", r)
		case i > 0 && r.From <= s[i-1].To:
			return fmt.Sprintf("vlans %s and %s overlap or are not sorted", s[i-1], r)
		}
		if r.PVID {
			pvids++
		}
	}
	if pvids > 1 {
		return "more than one pvid"
	}
	return ""
}

// CanonicalVLANs returns the set of one entry per VID in canonical form.
func CanonicalVLANs(m map[uint16]VLANFlags) VLANSet {
	var out VLANSet
	for _, vid := range slices.Sorted(maps.Keys(m)) {
		fl := m[vid]
		if n := len(out); n > 0 && !fl.PVID && !out[n-1].PVID && out[n-1].To+1 == vid && out[n-1].Untagged == fl.Untagged {
			out[n-1].To = vid
			continue
		}
		out = append(out, VLANRange{From: vid, To: vid, PVID: fl.PVID, Untagged: fl.Untagged})
	}
	return out
}

// Canonical returns s (ranges that may overlap only where their flags
// agree) in canonical form.
func (s VLANSet) Canonical() VLANSet { return CanonicalVLANs(s.Map()) }

// DefaultVLANs is the membership the kernel gives a new port, and a new
// bridge itself, for a bridge's default_pvid: that VID as PVID and egress
// untagged; none when default_pvid is 0.
func DefaultVLANs(defaultPVID uint16) VLANSet {
	if defaultPVID == 0 {
		return nil
	}
	return VLANSet{{From: defaultPVID, To: defaultPVID, PVID: true, Untagged: true}}
}
