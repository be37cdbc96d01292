package link

import (
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"

	"github.com/netagent/netagent/items"
)

// ipvlanKind creates ipvlans; the mode and the flags change in place (see
// items.IpvlanAttrs.NeedsRecreate). The kernel keeps them per parent: a
// create or a change that would give an ipvlan of someone else on the same
// parent another mode or flags is refused (ErrNotOwned), and a create
// always sends both, as ipvlan_link_new would otherwise reset the parent's
// mode to l3.
type ipvlanKind struct{ plainKind }

// parentMAC: an ipvlan has its parent's MAC (no ndo_set_mac_address).
func (ipvlanKind) parentMAC() {}

func (ipvlanKind) newLink(k *kernel, attrs netlink.LinkAttrs, want *items.Interface) (netlink.Link, func(), error) {
	a := items.AttrsOf[*items.IpvlanAttrs](want)
	parent, err := k.index(a.Parent, "ipvlan parent")
	if err != nil {
		return nil, nil, err
	}
	if err := k.ipvlanSharers(want.IfName, parent, *a); err != nil {
		return nil, nil, err
	}
	attrs.ParentIndex = parent
	return &netlink.IPVlan{LinkAttrs: attrs, Mode: ipvlanMode(a.Mode), Flag: ipvlanFlag(a.Flag)}, noRelease, nil
}

// converge writes the mode and the flags that differ (ipvlan_nl_changelink).
func (ipvlanKind) converge(k *kernel, l netlink.Link, obsIfc, wantIfc *items.Interface) error {
	obs := valueOr(items.AttrsOf[*items.IpvlanAttrs](obsIfc))
	want := valueOr(items.AttrsOf[*items.IpvlanAttrs](wantIfc))
	var attrs []attr
	if ipvlanMode(want.Mode) != ipvlanMode(obs.Mode) {
		attrs = append(attrs, u16Attr(nl.IFLA_IPVLAN_MODE, uint16(ipvlanMode(want.Mode))))
	}
	if ipvlanFlag(want.Flag) != ipvlanFlag(obs.Flag) {
		attrs = append(attrs, u16Attr(nl.IFLA_IPVLAN_FLAG, ipvlanFlagBits[ipvlanFlag(want.Flag)]))
	}
	if len(attrs) == 0 {
		return nil
	}
	if err := k.ipvlanSharers(wantIfc.IfName, l.Attrs().ParentIndex, want); err != nil {
		return err
	}
	if err := k.raw.setInfoData(l.Attrs().Index, "ipvlan", attrs); err != nil {
		return fmt.Errorf("setting ipvlan mode %s flag %s: %w", want.Mode, want.Flag, err)
	}
	return nil
}

func (ipvlanKind) observe(_ *kernel, l netlink.Link, nameOf func(int) string) (items.KindAttrs, error) {
	v, ok := l.(*netlink.IPVlan)
	if !ok {
		return nil, nil
	}
	return &items.IpvlanAttrs{Parent: nameOf(v.Attrs().ParentIndex), Mode: ipvlanModes[v.Mode], Flag: ipvlanFlags[v.Flag]}, nil
}

// mask: the mode "" is l3, the flag "" is bridge.
func (ipvlanKind) mask(obs, want items.KindAttrs) items.KindAttrs {
	v := valueOr(attrsAs[items.IpvlanAttrs](obs))
	w := valueOr(attrsAs[items.IpvlanAttrs](want))
	if w.Mode == "" && v.Mode == items.IpvlanDefaultMode {
		v.Mode = ""
	}
	if w.Flag == "" && v.Flag == items.IpvlanDefaultFlag {
		v.Flag = ""
	}
	return &v
}

// ipvlanSharers refuses to set a mode or flags on the parent (ifindex)
// that an ipvlan netagent does not own, on the same parent, does not have
// already: the kernel would change that one too.
func (k *kernel) ipvlanSharers(self string, parent int, want items.IpvlanAttrs) error {
	links, err := k.nl.LinkList()
	if err != nil {
		return fmt.Errorf("listing the ipvlans of the parent of %s: %w", self, err)
	}
	for _, l := range links {
		v, ok := l.(*netlink.IPVlan)
		if !ok || v.Attrs().ParentIndex != parent || v.Attrs().Name == self || owned(v) {
			continue
		}
		if v.Mode != ipvlanMode(want.Mode) || v.Flag != ipvlanFlag(want.Flag) {
			return fmt.Errorf("ipvlan %s: mode %s flag %s would change ipvlan %s on the same parent (mode %s flag %s; the kernel keeps one per parent): %w",
				self, ipvlanModes[ipvlanMode(want.Mode)], ipvlanFlags[ipvlanFlag(want.Flag)],
				v.Attrs().Name, ipvlanModes[v.Mode], ipvlanFlags[v.Flag], ErrNotOwned)
		}
	}
	return nil
}

var ipvlanModes = map[netlink.IPVlanMode]string{
	netlink.IPVLAN_MODE_L2:  "l2",
	netlink.IPVLAN_MODE_L3:  "l3",
	netlink.IPVLAN_MODE_L3S: "l3s",
}

var ipvlanFlags = map[netlink.IPVlanFlag]string{
	netlink.IPVLAN_FLAG_BRIDGE:  "bridge",
	netlink.IPVLAN_FLAG_PRIVATE: "private",
	netlink.IPVLAN_FLAG_VEPA:    "vepa",
}

// ipvlanFlagBits are the IFLA_IPVLAN_FLAGS bits of each flag (the values
// of netlink.IPVlanFlag are those of the kernel: IPVLAN_F_PRIVATE 1,
// IPVLAN_F_VEPA 2).
var ipvlanFlagBits = map[netlink.IPVlanFlag]uint16{
	netlink.IPVLAN_FLAG_BRIDGE: 0, netlink.IPVLAN_FLAG_PRIVATE: 1, netlink.IPVLAN_FLAG_VEPA: 2,
}

// ipvlanMode turns an item's mode into netlink's ("" is l3).
func ipvlanMode(name string) netlink.IPVlanMode {
	for m, n := range ipvlanModes {
		if n == name {
			return m
		}
	}
	return netlink.IPVLAN_MODE_L3
}

// ipvlanFlag turns an item's flag into netlink's ("" is bridge).
func ipvlanFlag(name string) netlink.IPVlanFlag {
	for f, n := range ipvlanFlags {
		if n == name {
			return f
		}
	}
	return netlink.IPVLAN_FLAG_BRIDGE
}

func u16Attr(typ int, v uint16) attr { return attr{typ, nl.Uint16Attr(v)} }

// IpvlanNames are an ipvlan's mode and flag by name ("l2", "l3", "l3s";
// "bridge", "private", "vepa"), as a snapshot keeps them.
func IpvlanNames(v *netlink.IPVlan) (mode, flag string) {
	return ipvlanModes[v.Mode], ipvlanFlags[v.Flag]
}

// IpvlanOf is the mode and flag of those names; ok false when one is no
// name of IpvlanNames.
func IpvlanOf(mode, flag string) (netlink.IPVlanMode, netlink.IPVlanFlag, bool) {
	m, f := ipvlanMode(mode), ipvlanFlag(flag)
	return m, f, ipvlanModes[m] == mode && ipvlanFlags[f] == flag
}
