package items

import (
	"fmt"
	"net/netip"
	"strconv"

	dg "github.com/netagent/netagent/depgraph"
)

// The item types. The strings are a contract: configurators are registered
// under them, and they appear in references ("route/main 0.0.0.0/0 metric
// 100"), the operation log and the status.
const (
	TypeLink          = "link"
	TypeInterface     = "interface"
	TypePort          = "port"
	TypeAddress       = "address"
	TypeRoute         = "route"
	TypeRule          = "rule"
	TypeNeighbor      = "neighbor"
	TypeIptablesChain = "iptables-chain"
	TypeSysctl        = "sysctl"
)

// RouteProtocol is the rtnetlink protocol number (rtm_protocol, and
// FRA_PROTOCOL for rules) that marks the routes and policy rules netagent
// creates. The route and rule configurators set it on everything they create
// and, on read-back, treat only objects carrying it as netagent's own: every
// other route or rule belongs to someone else and is never deleted.
// 211 is unassigned in <linux/rtnetlink.h>; map it to RouteProtocolName in
// /etc/iproute2/rt_protos.d/netagent.conf so that `ip route` shows
// "proto netagent".
const (
	RouteProtocol     = 211
	RouteProtocolName = "netagent"
)

// Routing table numbers with a name.
const (
	TableDefault = 253
	TableMain    = 254
	TableLocal   = 255
)

// IPv6DefaultMetric is the metric the kernel gives an IPv6 route created with
// metric 0 (IP6_RT_PRIO_USER). Route names and Equal treat the two as one.
const IPv6DefaultMetric = 1024

// Family is an address family.
type Family uint8

// The address families. The zero Family is unspecified.
const (
	FamilyIPv4 Family = 4
	FamilyIPv6 Family = 6
)

// String returns "ipv4", "ipv6" or "unspec".
func (f Family) String() string {
	switch f {
	case FamilyIPv4:
		return "ipv4"
	case FamilyIPv6:
		return "ipv6"
	}
	return "unspec"
}

// FamilyOf returns the family of a valid address, and 0 for the zero Addr.
// An IPv4-mapped IPv6 address is IPv6.
func FamilyOf(a netip.Addr) Family {
	switch {
	case a.Is4():
		return FamilyIPv4
	case a.Is6():
		return FamilyIPv6
	}
	return 0
}

// Scope is an rtnetlink scope (rtm_scope, ifa_scope), numbered as the kernel
// numbers them so that configurators can pass it through unchanged.
type Scope uint8

// The scopes of <linux/rtnetlink.h>. The zero Scope is universe ("global").
const (
	ScopeUniverse Scope = 0
	ScopeSite     Scope = 200
	ScopeLink     Scope = 253
	ScopeHost     Scope = 254
	ScopeNowhere  Scope = 255
)

// String returns the name `ip` uses ("global", "link", "host", ...) or the
// number.
func (s Scope) String() string {
	switch s {
	case ScopeUniverse:
		return "global"
	case ScopeSite:
		return "site"
	case ScopeLink:
		return "link"
	case ScopeHost:
		return "host"
	case ScopeNowhere:
		return "nowhere"
	}
	return strconv.Itoa(int(s))
}

// TableName returns "main", "local" or "default" for the named tables and
// "table N" for the others.
func TableName(table uint32) string {
	switch table {
	case TableMain:
		return "main"
	case TableLocal:
		return "local"
	case TableDefault:
		return "default"
	}
	return "table " + strconv.FormatUint(uint64(table), 10)
}

// appendTableName appends TableName(table) to b.
func appendTableName(b []byte, table uint32) []byte {
	switch table {
	case TableMain, TableLocal, TableDefault:
		return append(b, TableName(table)...)
	}
	return strconv.AppendUint(append(b, "table "...), uint64(table), 10)
}

// LinkRef refers to the external link item of an interface name.
func LinkRef(ifname string) dg.ItemRef { return dg.ItemRef{Type: TypeLink, Name: ifname} }

// InterfaceRef refers to the managed interface item of an interface name.
func InterfaceRef(ifname string) dg.ItemRef {
	return dg.ItemRef{Type: TypeInterface, Name: ifname}
}

// AddressName is the Name of the Address item for prefix on dev:
// "<dev>/<address>/<length>".
func AddressName(dev string, prefix netip.Prefix) string { return dev + "/" + prefix.String() }

// AddressRef refers to the Address item for prefix on dev.
func AddressRef(dev string, prefix netip.Prefix) dg.ItemRef {
	return dg.ItemRef{Type: TypeAddress, Name: AddressName(dev, prefix)}
}

// HasCarrier is the MustSatisfy predicate "carrier up": it holds for a Link
// that reports carrier. Routes out of a physical uplink depend on it, so they
// are withdrawn while the cable is out and come back with the carrier.
func HasCarrier(required dg.Item) bool {
	l, ok := required.(*Link)
	return ok && l != nil && l.Carrier
}

// NeedsRecreate reports whether oldItem cannot be turned into newItem in
// place, for any item type of this package; configurators can delegate their
// NeedsRecreate to it. Only interfaces and addresses ever need a recreate
// (see InterfaceNeedsRecreate and AddressNeedsRecreate): every other type
// either modifies in place or has all its immutable attributes in its name.
// Items of different types, or of types foreign to this package, give false.
func NeedsRecreate(oldItem, newItem dg.Item) bool {
	switch o := oldItem.(type) {
	case *Interface:
		n, ok := newItem.(*Interface)
		return ok && o != nil && n != nil && InterfaceNeedsRecreate(o, n)
	case *Address:
		n, ok := newItem.(*Address)
		return ok && o != nil && n != nil && AddressNeedsRecreate(o, n)
	}
	return false
}

// requires is a plain "must exist" dependency.
func requires(ref dg.ItemRef, description string) dg.Dependency {
	return dg.Dependency{RequiredItem: ref, Description: description}
}

// extraDeps turns the renderer's extra references into "must exist"
// dependencies.
func extraDeps(deps []dg.Dependency, refs []dg.ItemRef) []dg.Dependency {
	for _, ref := range refs {
		deps = append(deps, requires(ref, ""))
	}
	return deps
}

// ownPortRecreates marks the dependency on dev's own Port (the renderer
// lists it for a vrf's port) RecreateWhenModified: moving dev to another
// vrf makes the kernel cycle it, which flushes its IPv6 addresses and its
// neighbours, so they are deleted before and made again after.
func ownPortRecreates(deps []dg.Dependency, dev string) []dg.Dependency {
	for i, d := range deps {
		if d.RequiredItem == (dg.ItemRef{Type: TypePort, Name: dev}) {
			deps[i].RecreateWhenModified = true
		}
	}
	return deps
}

// valueOf returns *p, or the zero T for a nil p.
func valueOf[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// ptrEqual compares two optional values: both absent, or both present and
// equal.
func ptrEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// invalid wraps ErrInvalid with the item and the reason.
func invalid(item dg.Item, format string, args ...any) error {
	return fmt.Errorf("%w: %s %s: %s", ErrInvalid, item.Type(), item.Name(), fmt.Sprintf(format, args...))
}
