package items

import (
	"fmt"
	"net/netip"
	"slices"
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

// Address is an IP address on an interface. Its name is "<dev>/<prefix>"
// (see AddressName), so a different address or prefix length is another
// item.
type Address struct {
	Dev string
	// Prefix is the address with its prefix length, not masked:
	// 192.0.2.10/24.
	Prefix netip.Prefix
	// Label is the IPv4 address label (ifa_label); "" for the kernel's
	// default, the interface name. Not used for IPv6.
	Label string
	// Peer is the far end of a point-to-point address (`ip addr add
	// 10.0.0.1 peer 10.0.0.2/32`: IFA_ADDRESS, with Prefix's length; the
	// kernel routes Peer/len, not Prefix's subnet, through Dev); the zero
	// Addr for an address without one. Of Prefix's family.
	Peer netip.Addr
	// Scope is the IPv4 address scope. Leave it 0 for IPv6: the kernel
	// derives an IPv6 address's scope from the address.
	Scope Scope
	// Deps are further items that must exist first: the renderer lists the
	// Port of a vrf's port, whose enslaving flushes the IPv6 addresses.
	// Not kernel state: read-back copies them from the hint.
	Deps []dg.ItemRef
	// ValidUntil is when the kernel drops the address (its valid and
	// preferred lifetimes count down to it); zero: permanent. A DHCPv4
	// lease's address ends with the lease (as systemd-networkd sets it),
	// so that it goes even if the agent is not there to withdraw it. An
	// absolute time: the same lease renders the same item, and only a
	// lease event (acquired, renewed, rebound) moves it.
	ValidUntil time.Time
	// PreferredUntil, when set, is when the address's preferred lifetime
	// ends (the kernel then deprecates it: no new connections from it);
	// zero: with ValidUntil. A DHCPv6 lease gives both lifetimes, each
	// as the server gave it.
	PreferredUntil time.Time
	// RouteMetric is the metric of the route to the address's subnet
	// that the kernel adds with it (IFA_RT_PRIORITY); 0: the kernel's
	// default. A DHCPv4 lease's address has the lease's route metric, as
	// systemd-networkd gives it. Changed in place.
	RouteMetric uint32
}

var _ dg.Item = (*Address)(nil)

// Type returns TypeAddress.
func (a *Address) Type() string { return TypeAddress }

// Name returns "<dev>/<prefix>".
func (a *Address) Name() string { return AddressName(a.Dev, a.Prefix) }

// External returns false.
func (a *Address) External() bool { return false }

// Dependencies: the interface; then Deps, the device's own Port among
// them recreating the address when it is modified (see ownPortRecreates).
func (a *Address) Dependencies() []dg.Dependency {
	return ownPortRecreates(extraDeps([]dg.Dependency{requires(InterfaceRef(a.Dev), "")}, a.Deps), a.Dev)
}

// ConflictKeys implements depgraph.Conflicter. The kernel keys an IPv6
// address by interface and address alone, so two items that differ only in
// the prefix length cannot exist together: "address <dev> <addr>", and the
// reconciler deletes the old one before it adds the new. An IPv4 address
// is keyed by interface, address and prefix length (its name): none, so a
// new IPv4 address is added before the old one goes.
func (a *Address) ConflictKeys() []string {
	if a.Prefix.Addr().Is4() {
		return nil
	}
	return []string{"address " + a.Dev + " " + a.Prefix.Addr().String()}
}

// Equal compares every field.
func (a *Address) Equal(other dg.Item) bool {
	o, ok := other.(*Address)
	return ok && o != nil && a.Dev == o.Dev && a.Prefix == o.Prefix && a.Peer == o.Peer && a.Label == o.Label &&
		a.Scope == o.Scope && slices.Equal(a.Deps, o.Deps) && a.ValidUntil.Equal(o.ValidUntil) &&
		a.PreferredUntil.Equal(o.PreferredUntil) && a.RouteMetric == o.RouteMetric
}

// String describes the address in one line, `ip addr` style.
func (a *Address) String() string {
	s := fmt.Sprintf("address %s dev %s scope %s", a.Prefix, a.Dev, a.Scope)
	if a.Peer.IsValid() {
		s = fmt.Sprintf("address %s peer %s/%d dev %s scope %s", a.Prefix.Addr(), a.Peer, a.Prefix.Bits(), a.Dev, a.Scope)
	}
	if a.Label != "" {
		s += " label " + a.Label
	}
	if !a.ValidUntil.IsZero() {
		s += " valid until " + a.ValidUntil.UTC().Format(time.RFC3339)
	}
	if !a.PreferredUntil.IsZero() {
		s += " preferred until " + a.PreferredUntil.UTC().Format(time.RFC3339)
	}
	if a.RouteMetric != 0 {
		s += fmt.Sprintf(" metric %d", a.RouteMetric)
	}
	return s
}

// AddressNeedsRecreate reports whether old must be deleted and added again to
// become new: when Peer, Label or Scope differ (a new ValidUntil is a modify:
// the lifetimes are refreshed in place). A new RTM_NEWADDR with
// NLM_F_REPLACE for an existing IPv4 address only refreshes its lifetimes
// and metric (inet_rtm_newaddr), silently keeping the old label and scope.
// The address and prefix length are the item's name, so they never change.
func AddressNeedsRecreate(old, new *Address) bool {
	return old.Peer != new.Peer || old.Label != new.Label || old.Scope != new.Scope
}

// PeerPrefix is the prefix the kernel routes through the address's
// interface: Peer's with Prefix's length for a point-to-point address,
// Prefix's subnet otherwise (masked both).
func (a *Address) PeerPrefix() netip.Prefix {
	if a.Peer.IsValid() {
		return netip.PrefixFrom(a.Peer, a.Prefix.Bits()).Masked()
	}
	return a.Prefix.Masked()
}
