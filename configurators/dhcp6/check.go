package dhcp6

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/items/lease4"
)

// check holds a lease made of a server's REPLY (or read back from the
// state directory) to the rules of a DHCPv4 lease (lease4.Check): an
// address that is not a global unicast IPv6 address (multicast, loopback,
// link-local, unspecified, IPv4-mapped: items.IsRoutable) refuses the
// lease (ErrUnusable); a DNS server that is not one, past
// items.MaxNameservers, or a search domain that is not a DNS name
// (items.SearchDomains) is dropped, named in l.Dropped; the lifetimes
// are clamped (times).
func check(l *Lease) error {
	if !l.Address.Is6() || !items.IsRoutable(l.Address) {
		return fmt.Errorf("%w: address %s is not a global unicast IPv6 address", ErrUnusable, l.Address)
	}
	drop := func(format string, args ...any) { l.Dropped = append(l.Dropped, fmt.Sprintf(format, args...)) }
	var keep []netip.Addr
	for _, a := range l.DNS {
		switch {
		case !items.IsRoutable(a) || a == l.Address:
			drop("DNS server %s: not a global unicast address", a)
		case slices.Contains(keep, a):
		case len(keep) == items.MaxNameservers:
			drop("DNS server %s: more than %d", a, items.MaxNameservers)
		default:
			keep = append(keep, a)
		}
	}
	l.DNS = keep
	l.Search = items.SearchDomains(l.Search, drop)
	times(l, drop)
	return nil
}

// times clamps the lifetimes as lease4.Check does a DHCPv4 lease's: the
// valid lifetime at least lease4.MinLeaseTime, the preferred one never
// longer than the valid one (RFC 8415 21.6 has the client discard such an
// address; a server that got it wrong is taken at its valid lifetime),
// and T1 and T2 set so that lease4.MinRenew <= T1 < T2 < valid: a T1 or
// T2 the server gave that does not fit (other than 0, the client's
// choice) is replaced by RFC 8415's defaults, 0.5 and 0.8 times the
// preferred lifetime (21.4).
func times(l *Lease, drop func(string, ...any)) {
	if l.Valid < lease4.MinLeaseTime {
		drop("valid lifetime %s: raised to %s", l.Valid, lease4.MinLeaseTime)
		l.Valid = lease4.MinLeaseTime
	}
	if l.Preferred > l.Valid {
		drop("preferred lifetime %s: longer than the valid lifetime %s, taken as it", l.Preferred, l.Valid)
		l.Preferred = l.Valid
	}
	base := l.base()
	if l.T1 != 0 && (l.T1 < lease4.MinRenew || l.T1 >= l.Valid) {
		drop("T1 %s: not between %s and the valid lifetime %s", l.T1, lease4.MinRenew, l.Valid)
		l.T1 = 0
	}
	if l.T1 == 0 {
		l.T1 = max(base/2, lease4.MinRenew)
	}
	if l.T2 != 0 && (l.T2 <= l.T1 || l.T2 >= l.Valid) {
		drop("T2 %s: not between T1 %s and the valid lifetime %s", l.T2, l.T1, l.Valid)
		l.T2 = 0
	}
	if l.T2 == 0 {
		if l.T2 = base * 4 / 5; l.T2 <= l.T1 {
			l.T2 = l.T1 + (l.Valid-l.T1)/2
		}
	}
}
