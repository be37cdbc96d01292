package link

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/items"
)

const netUp = net.FlagUp

// create makes a virtual interface that does not exist yet: the link, its
// mark, then every setting (converge). The kernel ignores IFLA_IFALIAS in
// a create request, so the mark is a second request: before the add, the
// create is recorded in the create journal (before the add), and the entry is
// cleared once the link carries the mark, so that a crash in between
// leaves a link the next run adopts (adopt, read-back) rather than one it
// refuses for ever. Whatever fails after the link exists deletes it again,
// so that a failed create leaves nothing behind.
func (k *kernel) create(want *items.Interface) error {
	link, done, err := k.newLink(want)
	if err != nil {
		return fmt.Errorf("creating %s %s: %w", want.Kind, want.IfName, err)
	}
	defer done()
	stale, err := k.staleJournal()
	if err != nil {
		return err
	}
	if err := k.st.journal(want, stale); err != nil {
		return err
	}
	if err = k.nl.LinkAdd(link); err != nil {
		return errors.Join(fmt.Errorf("adding %s %s: %w", want.Kind, want.IfName, err), k.st.unjournal(want.IfName))
	}
	if err := k.finishCreate(want); err != nil {
		if l, lerr := k.lookup(want.IfName); lerr == nil && l != nil {
			if derr := k.nl.LinkDel(l); derr != nil {
				return errors.Join(err, derr) // the journal keeps the link netagent's
			}
		}
		return errors.Join(err, k.st.unjournal(want.IfName))
	}
	return nil
}

// finishCreate marks a new link (and a veth's peer in this namespace) as
// netagent's, clears its create journal entry and applies the settings.
func (k *kernel) finishCreate(want *items.Interface) error {
	l, err := k.nl.LinkByName(want.IfName)
	if err != nil {
		return fmt.Errorf("reading new %s %s: %w", want.Kind, want.IfName, err)
	}
	if err := k.nl.LinkSetAlias(l, markedAlias(want.Alias)); err != nil {
		return fmt.Errorf("marking %s %s: %w", want.Kind, want.IfName, err)
	}
	if err := linkKinds[want.Kind].afterCreate(k, want); err != nil {
		return fmt.Errorf("%s %s: %w", want.Kind, want.IfName, err)
	}
	if err := k.st.unjournal(want.IfName); err != nil {
		return err
	}
	if l, err = k.nl.LinkByName(want.IfName); err != nil {
		return fmt.Errorf("reading new %s %s: %w", want.Kind, want.IfName, err)
	}
	return k.converge(l, want)
}

// staleJournal lists the create journal's entries whose link does not
// exist, or exists with another kind: the agent was stopped before their
// add, and the entry must not make a link made later by someone else
// netagent's.
func (k *kernel) staleJournal() ([]string, error) {
	st, err := k.st.snapshot()
	if err != nil {
		return nil, err
	}
	var stale []string
	for name, entry := range st.Creating {
		l, err := k.lookup(name)
		if err != nil {
			return nil, err
		}
		if l == nil || kindOf(l) != entry.Kind {
			stale = append(stale, name)
		}
	}
	return stale, nil
}

// finishJournaled finishes the create of a link the journal names but that
// lacks the mark (the agent was stopped between the add and the mark):
// it marks the link and a journaled veth peer, clears the journal entry and
// returns the link read again.
func (k *kernel) finishJournaled(l netlink.Link, st nsState) (netlink.Link, error) {
	name := l.Attrs().Name
	entry, ok := st.Creating[name]
	if !ok { // l is the peer of a journaled veth
		name = k.nameOf(l.Attrs().ParentIndex)
		entry = st.Creating[name]
	}
	for _, n := range []string{name, entry.Peer} {
		if n == "" {
			continue
		}
		link, err := k.nl.LinkByName(n)
		if err != nil {
			return nil, fmt.Errorf("reading journaled link %s: %w", n, err)
		}
		if !owned(link) {
			if err := k.nl.LinkSetAlias(link, markAlias); err != nil {
				return nil, fmt.Errorf("marking journaled link %s: %w", n, err)
			}
		}
	}
	if err := k.st.unjournal(name); err != nil {
		return nil, err
	}
	fresh, err := k.nl.LinkByName(l.Attrs().Name)
	if err != nil {
		return nil, fmt.Errorf("reading link %s: %w", l.Attrs().Name, err)
	}
	return fresh, nil
}

// newLink builds the netlink link for a create request with the attributes
// the kernel fixes at creation; the rest is left to converge. The returned
// func releases what the request borrowed (a peer namespace's handle).
func (k *kernel) newLink(want *items.Interface) (netlink.Link, func(), error) {
	attrs := netlink.NewLinkAttrs()
	attrs.Name = want.IfName
	// The MTU is left to converge: a bridge given its MTU at creation
	// drops it for its ports' as soon as one joins, one set afterwards
	// (by "the user") it keeps; and a veth's peer would get it too.
	attrs.HardwareAddr = want.MAC
	kind, ok := linkKinds[want.Kind]
	if !ok {
		return nil, noRelease, fmt.Errorf("kind %q cannot be created", want.Kind)
	}
	return kind.newLink(k, attrs, want)
}

// ipOf converts an address for netlink (nil for none).
func ipOf(a netip.Addr) net.IP {
	if !a.IsValid() {
		return nil
	}
	return net.IP(a.AsSlice())
}
