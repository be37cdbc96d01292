package link

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/killpoint"
	"github.com/netagent/netagent/items"
)

const netUp = net.FlagUp

// create makes a virtual interface that does not exist yet (see
// createAll).
func (k *kernel) create(want *items.Interface) error {
	errs, _ := k.createAll([]*items.Interface{want})
	return errs[0]
}

// createAll makes virtual interfaces that do not exist yet, each as
// wanted, and returns one error (or nil) per link: for each, the link, its
// mark, then every setting (converge). The kernel ignores IFLA_IFALIAS in
// a create request, so the mark is a second request: before the first
// add, every create is recorded in the create journal (one write for all),
// and the entries are cleared (one write) once the links carry the mark,
// so that a crash in between leaves links the next run adopts (adopt,
// read-back) rather than ones it refuses for ever. Whatever fails after a
// link exists deletes it again, so that a failed create leaves nothing
// behind. taken reports the links whose add found one of that name (an
// earlier create of the batch made it: a veth whose peer is also wanted;
// or someone else did): a create over an existing link must look at it
// (see InterfaceConfigurator.existing).
func (k *kernel) createAll(wants []*items.Interface) (errs []error, taken []bool) {
	errs = make([]error, len(wants))
	taken = make([]bool, len(wants))
	reqs := make([]netlink.Link, len(wants))
	var journaled []*items.Interface
	for i, want := range wants {
		link, done, err := k.newLink(want)
		if err != nil {
			errs[i] = fmt.Errorf("creating %s %s: %w", want.Kind, want.IfName, err)
			continue
		}
		defer done()
		reqs[i] = link
		journaled = append(journaled, want)
	}
	if len(journaled) == 0 {
		return errs, taken
	}
	stale, err := k.staleJournal()
	if err == nil {
		err = k.st.journalAll(journaled, stale)
	}
	if err != nil {
		for i := range errs {
			errs[i] = cmp.Or(errs[i], err)
		}
		return errs, taken
	}
	var clear []string // the entries to clear: marked links, or none
	for i, want := range wants {
		if reqs[i] == nil {
			continue
		}
		var keep bool
		if errs[i], keep = k.createJournaled(reqs[i], want); !keep {
			clear = append(clear, want.IfName)
		}
		taken[i] = errors.Is(errs[i], errTaken)
	}
	if err := k.st.unjournal(clear...); err != nil {
		// As with any failure after the add: a new link goes again.
		for i, want := range wants {
			switch {
			case reqs[i] == nil:
			case errs[i] == nil:
				errs[i] = errors.Join(err, k.undo(want))
			default:
				errs[i] = errors.Join(errs[i], err)
			}
		}
	}
	return errs, taken
}

// kindModules are the kernel modules that give each kind of link (the
// rtnl_link_ops a create asks for): a kernel without the module answers
// EOPNOTSUPP.
var kindModules = map[items.InterfaceKind]string{
	items.KindBond: "bonding", items.KindBridge: "bridge", items.KindDummy: "dummy", items.KindIpvlan: "ipvlan",
	items.KindMacvlan: "macvlan", items.KindGRE: "ip_gre", items.KindIPIP: "ipip", items.KindSIT: "sit",
	items.KindIP6Tnl: "ip6_tunnel", items.KindVeth: "veth", items.KindVLAN: "8021q", items.KindVRF: "vrf",
	items.KindVxlan: "vxlan", items.KindWireguard: "wireguard",
}

// moduleHint is what an EOPNOTSUPP on adding a link of kind means: the
// kernel lacks the kind, and which module gives it.
func moduleHint(kind items.InterfaceKind) string {
	if m, ok := kindModules[kind]; ok {
		return fmt.Sprintf(" (this kernel has no %s links: load the module with `modprobe %s`, or use a kernel built with it)", kind, m)
	}
	return ""
}

// errTaken marks the failed add of a link whose name exists.
var errTaken = errors.New("the name is taken")

// explainExists says what an EEXIST on adding want means: the name is
// taken (errTaken), or, when no link has the name, another link already
// has the identity the kernel keeps unique for want's kind (a VLAN's
// parent, protocol and id; a VXLAN's VNI and port; a tunnel's endpoints).
func (k *kernel) explainExists(err error, want *items.Interface) error {
	if _, lerr := k.nl.LinkByName(want.IfName); lerr == nil || want.Attrs == nil {
		return fmt.Errorf("%w: %w", err, errTaken)
	}
	keys := want.Attrs.ConflictKeys(want.IfName)
	if len(keys) == 0 {
		return fmt.Errorf("%w: %w", err, errTaken)
	}
	return fmt.Errorf("%w: another link already is %s, which the kernel allows once per namespace", err, strings.Join(keys, ", "))
}

// createJournaled adds a journaled link and finishes it; keep reports
// that its journal entry must stay (the link exists without the mark: its
// delete failed).
func (k *kernel) createJournaled(link netlink.Link, want *items.Interface) (err error, keep bool) {
	if err = k.nl.LinkAdd(link); err != nil {
		switch {
		case errors.Is(err, unix.EEXIST):
			err = k.explainExists(err, want)
		case errors.Is(err, unix.EOPNOTSUPP):
			err = fmt.Errorf("%w%s", err, moduleHint(want.Kind))
		}
		return fmt.Errorf("adding %s %s: %w", want.Kind, want.IfName, err), false
	}
	killpoint.Pass() // added, not marked: only the create journal says it is netagent's
	if err = k.finishCreate(link, want); err != nil {
		if derr := k.undo(want); derr != nil {
			return errors.Join(err, derr), true // the journal keeps the link netagent's
		}
		return err, false
	}
	return nil, false
}

// undo deletes the link of a create that failed after its add, if it
// exists.
func (k *kernel) undo(want *items.Interface) error {
	l, err := k.lookup(want.IfName)
	if err != nil || l == nil {
		return nil
	}
	if err := k.nl.LinkDel(l); err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting the new %s %s again: %w", want.Kind, want.IfName, err)
	}
	return nil
}

// finishCreate marks a new link (the link of its add request, and a
// veth's peer in this namespace) as netagent's and applies the settings.
func (k *kernel) finishCreate(link netlink.Link, want *items.Interface) error {
	if want.Kind != items.KindVeth { // a veth marks its peer once it carries the mark (afterCreate)
		return k.finishFresh(link, want)
	}
	if err := k.nl.LinkSetAlias(link, markedAlias(want.Alias)); err != nil {
		return fmt.Errorf("marking %s %s: %w", want.Kind, want.IfName, err)
	}
	if err := linkKinds[want.Kind].afterCreate(k, want); err != nil {
		return fmt.Errorf("%s %s: %w", want.Kind, want.IfName, err)
	}
	l, err := k.nl.LinkByName(want.IfName)
	if err != nil {
		return fmt.Errorf("reading new %s %s: %w", want.Kind, want.IfName, err)
	}
	return k.converge(l, want)
}

// finishFresh finishes the create of a link whose kind has nothing to do
// after the mark (every kind but veth): it reads the new link once, and
// when the mark and the admin state are all that differ from want (a
// link made with its kind's settings, as usual), writes both in one
// request; otherwise it marks the link and converges it, as for any
// owned link, up last.
func (k *kernel) finishFresh(link netlink.Link, want *items.Interface) error {
	l, read, err := k.readNew(link, want)
	if err != nil {
		return fmt.Errorf("reading new %s %s: %w", want.Kind, want.IfName, err)
	}
	kk := *k
	kk.raw = read // the kind's own attributes, from the same read
	obs, err := kk.observe(l, k.nameOf, true)
	if err != nil {
		return err
	}
	marked := markedAlias(want.Alias)
	rest := mask(obs, want)
	rest.Alias, rest.AdminUp = want.Alias, want.AdminUp
	if rest.Equal(want) {
		up := want.AdminUp && !obs.AdminUp
		if err := k.raw.markUp(l.Attrs().Index, marked, up); err != nil {
			return fmt.Errorf("marking %s %s%s: %w", want.Kind, want.IfName, map[bool]string{true: " and setting it up"}[up], err)
		}
		return nil
	}
	if err := k.nl.LinkSetAlias(l, marked); err != nil {
		return fmt.Errorf("marking %s %s: %w", want.Kind, want.IfName, err)
	}
	l.Attrs().Alias = marked
	return k.runSteps(l, obs, want, k.convergeAlias)
}

// readNew reads a link just added, by the index its add learnt (by name
// if it has none), with rawOps that answer for it from the same read.
func (k *kernel) readNew(link netlink.Link, want *items.Interface) (netlink.Link, rawOps, error) {
	if i := link.Attrs().Index; i > 0 {
		l, read, err := k.raw.readLink(i)
		if err == nil && l.Attrs().Name == want.IfName {
			return l, read, nil
		}
		if err != nil && !errors.Is(err, unix.ENODEV) {
			return nil, nil, err
		}
	}
	l, err := k.nl.LinkByName(want.IfName)
	return l, k.raw, err
}

// staleJournal lists the create journal's entries whose link does not
// exist, or exists with another kind: the agent was stopped before their
// add, and the entry must not make a link made later by someone else
// netagent's. An entry whose link carries the mark (a veth's: not one,
// its peer may lack it) is done with too: the agent was stopped between
// the mark and the write that clears the entry.
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
		if l == nil || kindOf(l) != entry.Kind || (owned(l) && entry.Kind != items.KindVeth) {
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
