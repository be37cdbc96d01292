package lease4

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/netagent/netagent/items"
)

// What a lease may carry and its times: a server is not trusted (RFC 2131
// leaves the client free to refuse what it cannot use). A lease shorter
// than MinLeaseTime is taken as MinLeaseTime long (dhcpcd raises leases
// under 20 s, systemd-networkd takes the server's; a minute keeps a
// renewal at least half a minute after the last exchange); a renewal time
// (T1) under MinRenew, or not before the rebinding time (T2), is the
// default 1/2 of the lease, and a T2 not before the end of the lease (or
// not after T1) the default 7/8, so that T1 < T2 < the lease always
// holds.
const (
	MinLeaseTime = time.Minute
	MinRenew     = 10 * time.Second
	// MaxRoutes bounds the classless routes taken (option 121 carries at
	// most 255 bytes per option, several options concatenated: RFC 3396).
	MaxRoutes = 64
)

// ErrUnusable: the lease's address cannot be a host's (Check): the lease
// is refused, and a lease held before stays.
var ErrUnusable = errors.New("the server's lease is unusable")

// Check holds a lease made of a server's answer (or read back from the
// state directory) to the rules an intent's own addresses obey
// (items.IsRoutable). An address that no host may take, or a prefix
// length of 0, refuses the whole lease (ErrUnusable, naming it). What
// else is not usable is dropped, each with a line in l.Dropped for logs
// and status: a server identifier, router, DNS server or route gateway
// that is not a routable unicast address or is the lease's own address, a
// route to a multicast, loopback or reserved destination, a search domain
// that is not a DNS name (items.IsDomainName: nothing from a lease can
// start a line of resolv.conf), and what exceeds the bounds (MaxRoutes,
// items.MaxNameservers, items.MaxSearch). The times are clamped
// (MinLeaseTime, MinRenew, T1 < T2 < lease).
func Check(l *Lease) error {
	if err := checkAddress(l.Address); err != nil {
		return fmt.Errorf("%w: %w", ErrUnusable, err)
	}
	c := checker{l: l}
	c.server()
	c.router()
	c.dns()
	c.routes()
	c.domains()
	c.times()
	return nil
}

// checkAddress refuses an address no host on a link can have: not a
// routable unicast address, a prefix length of 0, or the network or
// broadcast address of its own subnet.
func checkAddress(p netip.Prefix) error {
	a := p.Addr()
	switch {
	case !p.IsValid() || !a.Is4():
		return fmt.Errorf("address %s is not an IPv4 address with a prefix length", p)
	case !items.IsRoutable(a):
		return fmt.Errorf("address %s is not a unicast address a host can have", a)
	case p.Bits() == 0:
		return fmt.Errorf("address %s has prefix length 0 (the whole IPv4 space on one link)", p)
	case isSubnetEnd(p, a):
		return fmt.Errorf("address %s is the network or broadcast address of %s", a, p.Masked())
	}
	return nil
}

// isSubnetEnd reports whether a is the first or last address of the
// subnet p, when p has more than two addresses (a /31 or /32 has no
// network or broadcast address: RFC 3021).
func isSubnetEnd(p netip.Prefix, a netip.Addr) bool {
	if p.Bits() > 30 || !p.Masked().Contains(a) {
		return false
	}
	return a == p.Masked().Addr() || a == lastOf(p)
}

// lastOf returns the last address of an IPv4 prefix.
func lastOf(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	for i := range 4 {
		b[i] |= byte(host >> (8 * (3 - i)))
	}
	return netip.AddrFrom4(b)
}

// checker drops what of l is not usable, noting each.
type checker struct{ l *Lease }

func (c *checker) drop(format string, args ...any) {
	c.l.Dropped = append(c.l.Dropped, fmt.Sprintf(format, args...))
}

// host explains why a is not usable as a server, router or name server
// of the lease; "" when it is.
func (c *checker) host(a netip.Addr) string {
	switch {
	case !a.Is4() || !items.IsRoutable(a):
		return "not a unicast address"
	case a == c.l.Address.Addr():
		return "the lease's own address"
	case isSubnetEnd(c.l.Address, a):
		return "the network or broadcast address of " + c.l.Address.Masked().String()
	}
	return ""
}

func (c *checker) server() {
	if a := c.l.Server; a.IsValid() {
		if why := c.host(a); why != "" {
			c.drop("server identifier %s: %s (renewals are broadcast)", a, why)
			c.l.Server = netip.Addr{}
		}
	}
}

func (c *checker) router() {
	if a := c.l.Router; a.IsValid() {
		if why := c.host(a); why != "" {
			c.drop("router %s: %s", a, why)
			c.l.Router = netip.Addr{}
		}
	}
}

func (c *checker) dns() {
	var keep []netip.Addr
	for _, a := range c.l.DNS {
		switch why := c.host(a); {
		case why != "":
			c.drop("DNS server %s: %s", a, why)
		case slices.Contains(keep, a):
		case len(keep) == items.MaxNameservers:
			c.drop("DNS server %s: more than %d", a, items.MaxNameservers)
		default:
			keep = append(keep, a)
		}
	}
	c.l.DNS = keep
}

// badDst are the destinations no lease route may have: multicast,
// loopback, "this network" and the reserved class E (with the limited
// broadcast).
var badDst = []netip.Prefix{netip.MustParsePrefix("224.0.0.0/4"), netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("240.0.0.0/4")}

// routeProblem explains why r cannot be a route of the lease; "" when it
// can.
func (c *checker) routeProblem(r Route) string {
	if !r.Dst.IsValid() || !r.Dst.Addr().Is4() {
		return "not an IPv4 destination"
	}
	if r.Dst.Bits() > 0 {
		for _, p := range badDst {
			if p.Overlaps(r.Dst) {
				return "a multicast, loopback or reserved destination"
			}
		}
	}
	if r.Via.IsValid() {
		if why := c.host(r.Via); why != "" {
			return "gateway " + why
		}
	}
	return ""
}

func (c *checker) routes() {
	var keep []Route
	for _, r := range c.l.Routes {
		switch why := c.routeProblem(r); {
		case why != "":
			c.drop("route %s via %s: %s", r.Dst, orNone(r.Via), why)
		case slices.ContainsFunc(keep, func(k Route) bool { return k.Dst == r.Dst }):
			c.drop("route %s via %s: a second route to %s", r.Dst, orNone(r.Via), r.Dst)
		case len(keep) == MaxRoutes:
			c.drop("route %s: more than %d routes", r.Dst, MaxRoutes)
		default:
			keep = append(keep, r)
		}
	}
	c.l.Routes = keep
}

func (c *checker) domains() {
	c.l.Domains = items.SearchDomains(c.l.Domains, c.drop)
}

// times clamps the lease time and T1 and T2 (see MinLeaseTime).
func (c *checker) times() {
	l := c.l
	if l.LeaseTime < MinLeaseTime {
		c.drop("lease time %s: raised to %s", l.LeaseTime, MinLeaseTime)
		l.LeaseTime = MinLeaseTime
	}
	if l.Rebind <= 0 || l.Rebind >= l.LeaseTime {
		c.defaultRebind()
	}
	if l.Renew < MinRenew || l.Renew >= l.Rebind {
		c.drop("renewal time (T1) %s: not between %s and the rebinding time %s, taken as %s", l.Renew, MinRenew, l.Rebind, l.LeaseTime/2)
		l.Renew = l.LeaseTime / 2
	}
	if l.Renew >= l.Rebind {
		c.defaultRebind()
	}
}

func (c *checker) defaultRebind() {
	l := c.l
	if want := l.LeaseTime * 7 / 8; l.Rebind != want {
		c.drop("rebinding time (T2) %s: not between T1 and the lease time %s, taken as %s", l.Rebind, l.LeaseTime, want)
		l.Rebind = want
	}
}
