package l3

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// addressConfigurator manages items.Address: addresses marked with
// IFA_PROTO = items.RouteProtocol. Every change goes over a conn, because
// netlink.Addr carries no IFA_PROTO.
type addressConfigurator struct {
	nlh  addressNL
	open opener
	// promotes reports whether the kernel promotes a secondary IPv4
	// address when the primary of its subnet goes (the sysctl
	// net.ipv4.conf.{all,<dev>}.promote_secondaries) instead of deleting
	// the secondaries with it.
	promotes func(dev string) (bool, error)
	// promoting runs f with net.ipv4.conf.<dev>.promote_secondaries on,
	// and then puts the sysctl back; nil where it cannot (a fake kernel).
	promoting func(dev string, f func() error) error
	// adopt takes over someone else's address of the item's identity
	// and prefix length instead of refusing it (ErrNotOwned) when it is
	// as the item has it (peer, label, scope): it gets only the IFA_PROTO mark,
	// by an in-place replace. One of another label or scope stays refused
	// (errAdoptDeletes): the kernel changes neither in place, and adopt
	// never deletes someone else's address.
	adopt bool
}

var _ reconciler.Configurator = (*addressConfigurator)(nil)

// addressNL is the part of netlink.Handle the address configurator uses:
// the routes through an interface (see delAddr).
type addressNL interface {
	RouteListFilteredIter(family int, filter *netlink.Route, filterMask uint64, f func(netlink.Route) bool) error
}

var _ addressNL = (*netlink.Handle)(nil)

// errAddrNotOwned: the kernel holds the item's address without our mark.
var errAddrNotOwned = fmt.Errorf("%w: the address is on the interface without netagent's IFA_PROTO mark", ErrNotOwned)

// Create adds the address. Ours already there as wanted: nothing to do;
// ours with another label or scope: deleted and added again; someone
// else's: ErrNotOwned, unless adopt takes it over (see adopt).
func (c *addressConfigurator) Create(_ context.Context, item dg.Item) error {
	return onItem[*items.Address](item, "adding address", c.create)
}

func (c *addressConfigurator) create(a *items.Address) error {
	if err := lifetimeOver(a, time.Now()); err != nil {
		return err
	}
	conn, err := c.open()
	if err != nil {
		return err
	}
	defer conn.close()
	index, err := conn.ifIndex(a.Dev)
	if err != nil {
		return err
	}
	list, k, err := lookupAddr(conn, a, index)
	switch {
	case err != nil:
		return err
	case k == nil:
		return addAddr(conn, a, index)
	case c.refuses(k, a):
		return notOwnedAddr(k, a)
	case k.prefix.Bits() != a.Prefix.Bits():
		return fmt.Errorf("netagent's address %s holds it", k.prefix)
	case k.owned() && addrAsWanted(k, a) && inPlaceAsWanted(k, a, time.Now()):
		return nil
	case addrAsWanted(k, a): // the mark too, for one adopt takes over
		if err := sendOne(conn, addrRequest(unix.RTM_NEWADDR, unix.NLM_F_REPLACE, a, index)); err != nil {
			return err
		}
		return markKept(conn, a, index)
	}
	old := *a
	old.Peer = k.peer // the kernel matches a delete by the peer too
	if err := c.delAddr(conn, list, k, &old, index); err != nil {
		return err
	}
	if err := addAddr(conn, a, index); err != nil || !k.recorded {
		return err
	}
	return conn.addrRecords().remove(recordEntry(a, index)) // added with the mark
}

// refuses reports whether k, the kernel's address of a's identity, is
// someone else's that Create leaves alone: always without adopt; with
// adopt, one that is not adoptable.
func (c *addressConfigurator) refuses(k *kernelAddr, a *items.Address) bool {
	return !k.owned() && (!c.adopt || !adoptableAddr(k, a))
}

// adoptableAddr reports whether adopt takes over someone else's address
// k of a's identity: one of a's prefix length (an IPv6 address of another
// the kernel would not delete by a's) that the kernel did not make by
// itself (the loopback's, an IPv6 link-local one: no tool made them, and
// netagent would delete them with the intent), and that differs from a in
// nothing but the mark (see notOwnedAddr).
func adoptableAddr(k *kernelAddr, a *items.Address) bool {
	return k.prefix.Bits() == a.Prefix.Bits() && !kernelsAddr(k) && addrDiffers(k, a) == ""
}

// errAdoptDeletes: someone else's address differs from the item in what
// only a delete and an add would change.
var errAdoptDeletes = errors.New("the kernel changes an address's peer, label and scope only by deleting and re-adding it, " +
	"and --adopt never deletes someone else's address; the intent's addresses have no label, and scope global " +
	"(import kernel leaves such an address out, with a warning): write the intent's peer as the kernel has it, " +
	"re-add the address as the intent has it by hand (which withdraws the routes through it), or leave it out of the intent")

// addrDiffers says what of someone else's address k differs from a in
// what the kernel cannot change in place: a point-to-point peer, an IPv4
// label or scope; "" when nothing does.
func addrDiffers(k *kernelAddr, a *items.Address) string {
	var d []string
	if k.peer != a.Peer {
		d = append(d, fmt.Sprintf("peer %s (the intent's: %s)", peerText(k.peer), peerText(a.Peer)))
	}
	if !labelScopeAsWanted(k, a) {
		label := a.Label
		if label == "" {
			label = a.Dev
		}
		d = append(d, fmt.Sprintf("label %s and scope %s (the intent's: label %s, scope %s)", k.label, items.Scope(k.scope), label, a.Scope))
	}
	return strings.Join(d, ", ")
}

// notOwnedAddr is the error the create of a fails with when someone
// else's address k holds a's identity and the configurator leaves it
// (refuses): errAddrNotOwned, saying, for one that adopt would take but
// for what differs (addrDiffers), what and why adopt does not
// (errAdoptDeletes). Clashes predicts the same error.
func notOwnedAddr(k *kernelAddr, a *items.Address) error {
	d := addrDiffers(k, a)
	if k.prefix.Bits() != a.Prefix.Bits() || kernelsAddr(k) || d == "" {
		return errAddrNotOwned
	}
	return fmt.Errorf("%w, with %s: %w", errAddrNotOwned, d, errAdoptDeletes)
}

// addAddr adds a and checks that the kernel kept the mark.
func addAddr(conn rawOps, a *items.Address, index int) error {
	if err := sendOne(conn, addrRequest(unix.RTM_NEWADDR, unix.NLM_F_CREATE|unix.NLM_F_EXCL, a, index)); err != nil {
		return err
	}
	_, k, err := lookupAddr(conn, a, index)
	switch {
	case err != nil:
		return err
	case k == nil:
		return errors.New("the kernel acknowledged the address but does not list it")
	case !k.owned():
		_ = sendOne(conn, addrRequest(unix.RTM_DELADDR, 0, a, index))
		return fmt.Errorf("%w (IFA_PROTO needs Linux 5.18)", ErrNoMark)
	}
	return nil
}

// markKept reads a back after an in-place replace: the kernel kept
// another protocol (an IPv4 address before Linux 6.3), so the address's
// ownership goes into the state directory's record (addrrecord.go); one
// with the mark is unrecorded, as netagent's own.
func markKept(conn rawOps, a *items.Address, index int) error {
	list, k, err := lookupAddr(conn, a, index)
	e := recordEntry(a, index)
	switch {
	case err != nil:
		return err
	case k == nil:
		return errors.New("the kernel acknowledged the replace but does not list the address")
	case k.proto == items.RouteProtocol:
		if k.recorded {
			return conn.addrRecords().remove(e)
		}
		return nil
	case conn.addrRecords() == nil:
		return fmt.Errorf("%w: the kernel kept the address's protocol %d on an in-place replace, and there is no state directory to record it in", ErrNoMark, k.proto)
	}
	return conn.addrRecords().add(e, list, ifNames(conn))
}

// peerText is a peer as addrDiffers names it.
func peerText(p netip.Addr) string {
	if !p.IsValid() {
		return "none"
	}
	return p.String()
}

// addrAsWanted compares what the kernel can differ in: the peer, and an
// IPv4 address's label ("" is the interface name) and scope.
func addrAsWanted(k *kernelAddr, a *items.Address) bool {
	return k.peer == a.Peer && labelScopeAsWanted(k, a)
}

// labelScopeAsWanted compares an IPv4 address's label and scope.
func labelScopeAsWanted(k *kernelAddr, a *items.Address) bool {
	if !a.Prefix.Addr().Is4() {
		return true
	}
	label := a.Label
	if label == "" {
		label = a.Dev
	}
	return k.label == label && k.scope == uint8(a.Scope)
}

// Modify refreshes the lifetimes (a new ValidUntil: a lease renewed) and
// the prefix route's metric (RouteMetric, which the kernel changes in
// place) as Create does; else nothing: addresses of one name differ only in label
// or scope, which the kernel cannot change in place (NeedsRecreate says
// so, and the reconciler recreates); asked anyway, it fails with
// ErrNeedsRecreate.
func (c *addressConfigurator) Modify(_ context.Context, oldItem, newItem dg.Item) error {
	o, err := items.As[*items.Address](oldItem)
	if err != nil {
		return err
	}
	n, err := items.As[*items.Address](newItem)
	if err != nil {
		return err
	}
	if items.AddressNeedsRecreate(o, n) {
		return fmt.Errorf("modifying address %s: %w", o.Name(), ErrNeedsRecreate)
	}
	if o.ValidUntil.Equal(n.ValidUntil) && o.PreferredUntil.Equal(n.PreferredUntil) && o.RouteMetric == n.RouteMetric {
		return nil
	}
	return onItem[*items.Address](n, "refreshing the lifetime of address", c.create)
}

// lifetimeOver refuses to add an address whose ValidUntil has passed:
// the lease it came from has ended, and the agent withdraws it.
func lifetimeOver(a *items.Address, now time.Time) error {
	if !a.ValidUntil.IsZero() && !now.Before(a.ValidUntil) {
		return fmt.Errorf("%w: its lifetime ended at %s", ErrLifetimeOver, a.ValidUntil.UTC().Format(time.RFC3339))
	}
	return nil
}

// Delete removes our address; gone (or its interface gone) is success,
// someone else's is ErrNotOwned.
func (c *addressConfigurator) Delete(_ context.Context, item dg.Item) error {
	return onItem[*items.Address](item, "deleting address", c.delete)
}

func (c *addressConfigurator) delete(a *items.Address) error {
	conn, err := c.open()
	if err != nil {
		return err
	}
	defer conn.close()
	index, err := conn.ifIndex(a.Dev)
	if errors.Is(err, ErrNoDevice) {
		return nil
	} else if err != nil {
		return err
	}
	list, k, err := lookupAddr(conn, a, index)
	switch {
	case err != nil:
		return err
	case k == nil || (k.owned() && k.prefix.Bits() != a.Prefix.Bits()):
		return nil
	case !k.owned():
		return errAddrNotOwned
	}
	if err := c.delAddr(conn, list, k, a, index); err != nil {
		return err
	}
	if k.recorded {
		return conn.addrRecords().remove(recordEntry(a, index))
	}
	return nil
}

// delAddr deletes our address k (a's kernel object), unless the kernel
// would take someone else's objects with it (ErrNotOwned):
//
//   - When k is the primary IPv4 address of its subnet and the kernel does
//     not promote secondaries, it deletes every secondary of the subnet with
//     k, and with the last address of the interface every route through
//     it: a new address added beside the old one (make before break) would
//     go with it. So the delete runs with promote_secondaries on for the
//     interface, put back after; a secondary becomes primary and every
//     route stays. Where that cannot be done, ours are added back and one
//     of someone else's blocks the delete.
//   - When k is the last IPv4 address of its interface, the kernel flushes
//     every IPv4 route through the interface (fib_disable_ip). Another
//     protocol's route through it blocks the delete (kernel routes go with
//     the address anyway; ours are the reconciler's business). The block
//     is temporary when the intent adds another address in the same pass.
func (c *addressConfigurator) delAddr(conn rawOps, list []kernelAddr, k *kernelAddr, a *items.Address, index int) error {
	if lastIPv4(list, k) {
		if err := c.checkNoForeignRoutes(index, a.Dev); err != nil {
			return err
		}
	}
	secs := secondariesOf(list, k)
	if len(secs) > 0 {
		promotes, err := c.promotes(a.Dev)
		if err != nil {
			return err
		}
		if promotes {
			secs = nil
		} else if c.promoting != nil {
			return c.promoting(a.Dev, func() error { return delOne(conn, a, index) })
		}
	}
	for _, s := range secs {
		if !s.owned() {
			return errPrimaryOf(s.prefix)
		}
	}
	if err := delOne(conn, a, index); err != nil {
		return err
	}
	var errs []error
	for _, s := range secs {
		it := addrItemOf(&s, a.Dev, nil)
		if err := sendOne(conn, addrRequest(unix.RTM_NEWADDR, unix.NLM_F_CREATE|unix.NLM_F_EXCL, it, index)); err != nil {
			errs = append(errs, fmt.Errorf("adding back secondary address %s: %w", it.Prefix, err))
		}
	}
	return errors.Join(errs...)
}

// delOne sends the delete of a; already gone is success.
func delOne(conn rawOps, a *items.Address, index int) error {
	err := sendOne(conn, addrRequest(unix.RTM_DELADDR, 0, a, index))
	if err != nil && !isErrno(err, unix.EADDRNOTAVAIL) {
		return err
	}
	return nil
}

// lastIPv4 reports whether k is the only IPv4 address of its interface in
// list (a dump of IPv4 addresses).
func lastIPv4(list []kernelAddr, k *kernelAddr) bool {
	if !k.prefix.Addr().Is4() {
		return false
	}
	for i := range list {
		if list[i].index == k.index && list[i].prefix != k.prefix {
			return false
		}
	}
	return true
}

// checkNoForeignRoutes fails with ErrNotOwned if an IPv4 route of another
// protocol than netagent's and the kernel's goes through the interface.
func (c *addressConfigurator) checkNoForeignRoutes(index int, dev string) error {
	var found []string
	err := retryDump("routes", func() error {
		found = found[:0]
		return c.nlh.RouteListFilteredIter(netlink.FAMILY_V4, &netlink.Route{}, netlink.RT_FILTER_TABLE, func(r netlink.Route) bool {
			if r.Protocol != items.RouteProtocol && r.Protocol != unix.RTPROT_KERNEL && routeVia(&r, index) {
				found = append(found, r.String())
			}
			return true
		})
	})
	switch {
	case err != nil:
		return err
	case len(found) > 0:
		return errLastAddress(dev, found)
	}
	return nil
}

// errPrimaryOf: deleting the address would delete someone's secondary.
func errPrimaryOf(secondary netip.Prefix) error {
	return fmt.Errorf("%w: it is the primary address of secondary %s, which the kernel would delete with it (promote_secondaries is off)", ErrNotOwned, secondary)
}

// errLastAddress: deleting dev's last IPv4 address would flush the routes
// of others through dev (found, as netlink.Route prints them).
func errLastAddress(dev string, found []string) error {
	return fmt.Errorf("%w: it is the last IPv4 address of %s, and the kernel would flush routes of others through it with it: %v", ErrNotOwned, dev, found)
}

// routeVia reports whether a route goes out of the interface index.
func routeVia(r *netlink.Route, index int) bool {
	if r.LinkIndex == index {
		return true
	}
	for _, nh := range r.MultiPath {
		if nh.LinkIndex == index {
			return true
		}
	}
	return false
}

// secondariesOf returns the secondary addresses of primary k's subnet.
func secondariesOf(list []kernelAddr, k *kernelAddr) []kernelAddr {
	if !k.prefix.Addr().Is4() || k.secondary() {
		return nil
	}
	var secs []kernelAddr
	for _, s := range list {
		if s.index == k.index && s.secondary() && s.prefix.Bits() == k.prefix.Bits() &&
			s.prefix.Masked() == k.prefix.Masked() {
			secs = append(secs, s)
		}
	}
	return secs
}

// NeedsRecreate delegates to items.NeedsRecreate: a new label or scope.
func (c *addressConfigurator) NeedsRecreate(oldItem, newItem dg.Item) bool {
	return items.NeedsRecreate(oldItem, newItem)
}

// lookupAddr dumps the addresses of a's family and returns them with a's
// kernel object, or nil: on a's interface, the same address and, for
// IPv4, the same prefix length (the kernel keys an IPv6 address by the
// address alone).
func lookupAddr(conn rawOps, a *items.Address, index int) ([]kernelAddr, *kernelAddr, error) {
	list, err := dumpAddrs(conn, int(afOf(items.FamilyOf(a.Prefix.Addr()))))
	if err != nil {
		return nil, nil, err
	}
	for i := range list {
		k := &list[i]
		if k.index == index && sameAddr(k.prefix, a.Prefix) {
			return list, k, nil
		}
	}
	return list, nil, nil
}

// dumpAddrs lists the addresses of one family (unix.AF_UNSPEC for both).
func dumpAddrs(conn rawOps, family int) ([]kernelAddr, error) {
	var list []kernelAddr
	err := retryDump("addresses", func() error {
		msgs, err := conn.dump(addrDumpRequest(family), unix.RTM_NEWADDR)
		list = list[:0]
		for _, m := range msgs {
			if k, ok := parseAddr(m); ok {
				list = append(list, k)
			}
		}
		return err
	})
	if err != nil {
		return list, err
	}
	return list, applyAddrRecords(conn, list)
}

// sendOne sends one request and returns the kernel's answer.
func sendOne(conn rawOps, req *nlRequest) error {
	return conn.exchange([]*nlRequest{req})[0].err
}
