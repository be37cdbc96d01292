package link

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/items"
)

// nicOps reads what a NIC is beyond what netlink's link dump says: its
// driver (ethtool's drvinfo) and its bus path (udev's ID_PATH, from
// sysfs). An error means "not known": a key on it does not match.
type nicOps interface {
	nicDriver(name string) (string, error)
	nicPath(name string, index int) (string, error)
}

// findNIC returns the one link of the namespace that want's match finds
// among the links netagent does not own: ErrNoMatch for none,
// ErrAmbiguousMatch (naming every candidate) for more.
func (k *kernel) findNIC(want *items.Interface) (netlink.Link, error) {
	links, err := k.nl.LinkList()
	if err != nil {
		return nil, fmt.Errorf("physical interface %s: listing links: %w", want.IfName, err)
	}
	st, err := k.st.snapshot()
	if err != nil {
		return nil, err
	}
	nameOf := k.nameOf
	var found []netlink.Link
	for _, l := range links {
		if l.Attrs().Flags&net.FlagLoopback != 0 || owns(l, st, nameOf) {
			continue
		}
		if want.Match.Matches(k.nicFacts(l, st, want.Match)) {
			found = append(found, l)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("physical interface %s: %w %s", want.IfName, ErrNoMatch, want.Match)
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("physical interface %s: %w %s: %s; nothing renamed", want.IfName, ErrAmbiguousMatch, want.Match, linkNames(found))
}

// linkNames lists the links' names, sorted.
func linkNames(links []netlink.Link) string {
	var names []string
	for _, l := range links {
		names = append(names, l.Attrs().Name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// nicFacts describes l for m: what netlink says, and the driver and the
// path only when m asks for them (each costs a request). Its name is the
// one the kernel gave it: for a NIC netagent renamed, the recorded
// original (st), so that a name glob goes on finding it.
func (k *kernel) nicFacts(l netlink.Link, st nsState, m *items.NICMatch) items.NIC {
	a := l.Attrs()
	n := items.NIC{Name: a.Name, Index: a.Index, MAC: a.HardwareAddr, PermanentMAC: a.PermHWAddr}
	if o := st.originalOf(l); o != nil && o.Name != nil && validName(*o.Name) == nil {
		n.Name = *o.Name
	}
	if m.Driver != "" && k.nic != nil {
		n.Driver, _ = k.nic.nicDriver(a.Name)
	}
	if m.Path != "" && k.nic != nil {
		n.Path, _ = k.nic.nicPath(a.Name, a.Index)
	}
	return n
}

// matchedNIC finds want's NIC and gives it want's name: the NIC found
// keeps its ifindex, and what depends on the interface follows it.
func (k *kernel) matchedNIC(want *items.Interface) (netlink.Link, error) {
	l, err := k.findNIC(want)
	if err != nil {
		return nil, err
	}
	if l.Attrs().Name == want.IfName {
		return l, k.st.rememberName(l, want.IfName, want.Match) // the match, for show
	}
	other, err := k.lookup(want.IfName)
	if err != nil {
		return nil, err
	}
	if other != nil {
		return nil, fmt.Errorf("physical interface %s: the NIC it matches is %s, and %s %w (which the match %s does not find); nothing renamed",
			want.IfName, l.Attrs().Name, want.IfName, ErrNameTaken, want.Match)
	}
	if err := k.st.rememberName(l, want.IfName, want.Match); err != nil {
		return nil, err
	}
	return k.rename(l, want.IfName)
}

// rename gives l the name: the kernel renames a link only while it is
// down (EBUSY), so an up link is set down for it and up again.
func (k *kernel) rename(l netlink.Link, name string) (netlink.Link, error) {
	old := l.Attrs().Name
	up := l.Attrs().Flags&net.FlagUp != 0
	if up {
		if err := k.nl.LinkSetDown(l); err != nil {
			return nil, fmt.Errorf("setting %s down to rename it %s: %w", old, name, err)
		}
	}
	err := k.nl.LinkSetName(l, name)
	if up {
		if uerr := k.nl.LinkSetUp(l); uerr != nil && err == nil {
			err = uerr
		}
	}
	if err != nil {
		return nil, fmt.Errorf("renaming %s to %s: %w", old, name, err)
	}
	renamed, err := k.nl.LinkByIndex(l.Attrs().Index)
	if err != nil {
		return nil, fmt.Errorf("reading %s (renamed from %s): %w", name, old, err)
	}
	return renamed, nil
}

// readMatch is the match a read-back gives the link l, which carries
// the name of the interface want (nil: the intent is not known, as for
// show; the match recorded for l is taken): the match when l still
// matches it, else nil, so that the interface differs and its modify
// finds its NIC again.
func (k *kernel) readMatch(l netlink.Link, st nsState, want *items.Interface) *items.NICMatch {
	var m *items.NICMatch
	switch o := st.originalOf(l); {
	case want != nil:
		m = want.Match
	case o != nil && o.Match.item().Problem() == "":
		m = o.Match.item()
	}
	if m == nil || !m.Matches(k.nicFacts(l, st, m)) {
		return nil
	}
	return m
}
