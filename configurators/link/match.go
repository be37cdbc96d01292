package link

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/internal/killpoint"
	"github.com/netagent/netagent/items"
)

// nicOps reads what a NIC is beyond what netlink's link dump says: its
// driver (ethtool's drvinfo), its bus path (udev's ID_PATH, from
// sysfs) and its permanent address from ethtool's permaddr (for kernels
// whose link dump has no IFLA_PERM_ADDRESS). An error means "not known": a key on it does not match.
type nicOps interface {
	nicDriver(name string) (string, error)
	nicPath(name string, index int) (string, error)
	nicPermAddr(name string) (net.HardwareAddr, error)
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
	if len(n.PermanentMAC) == 0 && m.PermanentMAC != nil && k.nic != nil {
		n.PermanentMAC, _ = k.nic.nicPermAddr(a.Name) // older kernels: no IFLA_PERM_ADDRESS
	}
	if _, o := st.find(a, a.Name); o != nil && o.Name != nil && validName(*o.Name) == nil {
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
// keeps its ifindex, and what depends on the interface follows it. A NIC
// in the way that another interface of the intent matches is moved aside
// first (swap.go).
func (k *kernel) matchedNIC(want *items.Interface) (netlink.Link, error) {
	l, holder, err := k.nicFor(want)
	if err != nil {
		return nil, err
	}
	if l.Attrs().Name == want.IfName {
		return l, k.st.rememberName(l, want.IfName, want.Match) // renamed already: the match is recorded (for show)
	}
	if err := k.clearName(holder); err != nil {
		return nil, fmt.Errorf("physical interface %s: %w", want.IfName, err)
	}
	if err := k.st.rememberName(l, want.IfName, want.Match); err != nil {
		return nil, err
	}
	return k.rename(l, want.IfName)
}

// nicFor finds want's NIC (findNIC) and checks that it may take want's
// name: it has it, or no other link has, or the link that has it (holder)
// is one that another interface of the intent matches (claimant), which
// may be moved out of the way. Any other holder is ErrNameTaken, naming
// both. Plan predicts a matched interface's failure with it (clashes).
func (k *kernel) nicFor(want *items.Interface) (nic, holder netlink.Link, err error) {
	l, err := k.findNIC(want)
	if err != nil || l.Attrs().Name == want.IfName {
		return l, nil, err
	}
	other, err := k.lookup(want.IfName)
	if err != nil || other == nil {
		return l, nil, err
	}
	if k.claimant(other, want) == nil {
		return nil, nil, fmt.Errorf("physical interface %s: the NIC it matches is %s, and %s %w (which neither the match %s nor another interface's finds); nothing renamed",
			want.IfName, l.Attrs().Name, want.IfName, ErrNameTaken, want.Match)
	}
	return l, other, nil
}

// rename gives l the name: the kernel renames a link only while it is
// down (EBUSY), so an up link is set down for it and up again.
func (k *kernel) rename(l netlink.Link, name string) (netlink.Link, error) {
	old := l.Attrs().Name
	up, err := k.downForRename(l, "rename it "+name)
	if err != nil {
		return nil, err
	}
	err = k.nl.LinkSetName(l, name)
	if err == nil {
		killpoint.Pass() // renamed, and still down if it was up
	}
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

// downForRename sets l down for a rename (the kernel renames only a down
// link), its admin state recorded first as found, so that the give-back
// sets it up again also after a kill before the rename's own up; up
// reports whether it was up.
func (k *kernel) downForRename(l netlink.Link, why string) (up bool, err error) {
	if l.Attrs().Flags&net.FlagUp == 0 {
		return false, nil
	}
	if err := k.st.rememberOriginals(l, settingSet{"up"}); err != nil {
		return false, err
	}
	if err := k.nl.LinkSetDown(l); err != nil {
		return false, fmt.Errorf("setting %s down to %s: %w", l.Attrs().Name, why, err)
	}
	return true, nil
}

// readMatch is the match a read-back gives the link l: the one recorded
// as having found it (matchedNIC records it), while l still matches it;
// else nil. So an interface whose match changed, or whose NIC no longer
// matches (or lost the name), differs from the intent, and its modify
// finds its NIC again and records the match; and a read-back without the
// intent (show) has it too.
func (k *kernel) readMatch(l netlink.Link, st nsState) *items.NICMatch {
	o := st.originalOf(l)
	if o == nil || o.Match.item().Problem() != "" {
		return nil
	}
	m := o.Match.item()
	if m == nil || !m.Matches(k.nicFacts(l, st, m)) {
		return nil
	}
	return m
}
