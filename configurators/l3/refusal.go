package l3

import (
	"slices"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// Refusals follows the IPv4 addresses of a namespace through the
// operations of a dry run, one by one in the order they would run, and
// predicts the deletes of netagent's addresses that the address
// configurator refuses because the kernel would take someone else's
// objects with them (see delAddr): an interface's last IPv4 address while
// someone's IPv4 routes go through it. (The primary address of a subnet
// is deleted with promote_secondaries on: its secondaries, ours or
// someone's, are promoted, never deleted.) A plan uses it with Clashes,
// which covers the creates.
type Refusals struct {
	names map[string]int // interface name → index
	addrs []kernelAddr   // the IPv4 addresses, as the operations so far leave them
	// foreign are, per interface index, others' IPv4 routes through it:
	// dumped (with nlh) only when a delete would empty an interface, the
	// one case that needs them (a plan that deletes no last address does
	// not read another owner's full table).
	foreign map[int][]string
	nlh     dumpNL
	loaded  bool
	// emptied holds the addresses whose delete left their interface
	// without an IPv4 address: the kernel then flushes every IPv4 route
	// through it (fib_disable_ip).
	emptied map[dg.ItemRef]bool
}

// NewRefusals reads the IPv4 addresses (and, when a delete needs them,
// the routes of others through an interface).
func NewRefusals(t *netnsx.Target, stateDir string) (*Refusals, error) {
	conn, err := openConnIn(t, stateDir)
	if err != nil {
		return nil, err
	}
	defer conn.close()
	return newRefusals(t.NL, conn)
}

// newRefusals is NewRefusals over the narrow interfaces (a fake kernel in
// unit tests).
func newRefusals(nlh dumpNL, conn rawOps) (*Refusals, error) {
	names, err := linkNames(conn)
	if err != nil {
		return nil, err
	}
	r := &Refusals{names: make(map[string]int, len(names)), foreign: make(map[int][]string),
		emptied: make(map[dg.ItemRef]bool), nlh: nlh}
	for i, n := range names {
		r.names[n] = i
	}
	if r.addrs, err = dumpAddrs(conn, unix.AF_INET); err != nil {
		return nil, err
	}
	return r, nil
}

// foreignVia returns others' IPv4 routes through the interface index,
// dumping them on first use.
func (r *Refusals) foreignVia(index int) ([]string, error) {
	if r.loaded {
		return r.foreign[index], nil
	}
	err := retryDump("routes", func() error {
		clear(r.foreign)
		return r.nlh.RouteListFilteredIter(netlink.FAMILY_V4, &netlink.Route{}, netlink.RT_FILTER_TABLE, func(rt netlink.Route) bool {
			if rt.Protocol == items.RouteProtocol || rt.Protocol == unix.RTPROT_KERNEL {
				return true
			}
			for _, i := range r.names {
				if routeVia(&rt, i) {
					r.foreign[i] = append(r.foreign[i], rt.String())
				}
			}
			return true
		})
	})
	if err != nil {
		return nil, err
	}
	r.loaded = true
	return r.foreign[index], nil
}

// Predict returns the error the operation fails with, or nil, and
// follows its effect on the addresses. It must see every operation that
// runs (and none that fails), in order.
func (r *Refusals) Predict(op reconciler.Operation, it dg.Item) error {
	a, ok := it.(*items.Address)
	if !ok || !a.Prefix.Addr().Is4() {
		return nil
	}
	index, ok := r.names[a.Dev]
	if !ok {
		return nil
	}
	switch op {
	case reconciler.OpCreate:
		r.add(a, index)
	case reconciler.OpDelete:
		return wrapIf(r.remove(a, index), "deleting address %s", a.Name())
	}
	return nil
}

// add records a new address of ours: secondary if its subnet has a
// primary already.
func (r *Refusals) add(a *items.Address, index int) {
	if r.find(a, index) != nil {
		return
	}
	k := kernelAddr{index: index, prefix: a.Prefix, proto: items.RouteProtocol}
	if slices.ContainsFunc(r.addrs, func(p kernelAddr) bool {
		return p.index == index && !p.secondary() && p.prefix.Bits() == a.Prefix.Bits() && p.prefix.Masked() == a.Prefix.Masked()
	}) {
		k.flags |= unix.IFA_F_SECONDARY
	}
	r.addrs = append(r.addrs, k)
}

// remove deletes our address, as delAddr would, or says why it would not.
func (r *Refusals) remove(a *items.Address, index int) error {
	k := r.find(a, index)
	if k == nil || !k.owned() {
		return nil
	}
	if lastIPv4(r.addrs, k) {
		foreign, err := r.foreignVia(index)
		if err != nil {
			return err
		}
		if len(foreign) > 0 {
			return errLastAddress(a.Dev, foreign)
		}
	}
	secs := secondariesOf(r.addrs, k)
	if lastIPv4(r.addrs, k) {
		r.emptied[dg.Ref(a)] = true
	}
	gone := k.prefix
	r.addrs = slices.DeleteFunc(r.addrs, func(x kernelAddr) bool { return x.index == index && x.prefix == gone })
	if len(secs) > 0 { // promoted: the first is the primary now
		for i := range r.addrs {
			if r.addrs[i].index == index && r.addrs[i].prefix == secs[0].prefix {
				r.addrs[i].flags &^= unix.IFA_F_SECONDARY
			}
		}
	}
	return nil
}

func (r *Refusals) find(a *items.Address, index int) *kernelAddr {
	for i := range r.addrs {
		if k := &r.addrs[i]; k.index == index && sameAddr(k.prefix, a.Prefix) {
			return k
		}
	}
	return nil
}

// Emptied reports whether the delete of the address ref (predicted to
// succeed) left its interface without an IPv4 address, so that the kernel
// flushes the IPv4 routes through it.
func (r *Refusals) Emptied(ref dg.ItemRef) bool { return r.emptied[ref] }
