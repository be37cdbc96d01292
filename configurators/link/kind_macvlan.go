package link

import (
	"fmt"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/items"
)

// macvlanKind creates macvlans; the mode changes in place (but to or from
// passthru, see items.MacvlanAttrs.NeedsRecreate).
type macvlanKind struct{ plainKind }

// liveMAC: a macvlan takes a new MAC while up (macvlan_set_mac_address).
func (macvlanKind) liveMAC() {}

func (macvlanKind) newLink(k *kernel, attrs netlink.LinkAttrs, want *items.Interface) (netlink.Link, func(), error) {
	m := items.AttrsOf[*items.MacvlanAttrs](want)
	parent, err := k.index(m.Parent, "macvlan parent")
	if err != nil {
		return nil, nil, err
	}
	attrs.ParentIndex = parent
	return &netlink.Macvlan{LinkAttrs: attrs, Mode: macvlanMode(m.Mode)}, noRelease, nil
}

func (macvlanKind) converge(k *kernel, l netlink.Link, obsIfc, wantIfc *items.Interface) error {
	obs := valueOr(items.AttrsOf[*items.MacvlanAttrs](obsIfc))
	want := valueOr(items.AttrsOf[*items.MacvlanAttrs](wantIfc))
	if macvlanMode(want.Mode) == macvlanMode(obs.Mode) {
		return nil
	}
	if err := k.nl.LinkSetMacvlanMode(l, macvlanMode(want.Mode)); err != nil {
		return fmt.Errorf("setting macvlan mode %s: %w", want.Mode, err)
	}
	return nil
}

func (macvlanKind) observe(_ *kernel, l netlink.Link, nameOf func(int) string) (items.KindAttrs, error) {
	m, ok := l.(*netlink.Macvlan)
	if !ok {
		return nil, nil
	}
	return &items.MacvlanAttrs{Parent: nameOf(m.Attrs().ParentIndex), Mode: macvlanModes[m.Mode]}, nil
}

// mask: the mode "" is vepa.
func (macvlanKind) mask(obs, want items.KindAttrs) items.KindAttrs {
	m := valueOr(attrsAs[items.MacvlanAttrs](obs))
	if valueOr(attrsAs[items.MacvlanAttrs](want)).Mode == "" && m.Mode == items.MacvlanDefaultMode {
		m.Mode = ""
	}
	return &m
}

var macvlanModes = map[netlink.MacvlanMode]string{
	netlink.MACVLAN_MODE_PRIVATE:  "private",
	netlink.MACVLAN_MODE_VEPA:     "vepa",
	netlink.MACVLAN_MODE_BRIDGE:   "bridge",
	netlink.MACVLAN_MODE_PASSTHRU: "passthru",
	netlink.MACVLAN_MODE_SOURCE:   "source",
}

// macvlanMode turns an item's mode into netlink's ("" is vepa).
func macvlanMode(name string) netlink.MacvlanMode {
	for m, n := range macvlanModes {
		if n == name {
			return m
		}
	}
	return netlink.MACVLAN_MODE_VEPA
}
