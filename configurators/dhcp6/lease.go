package dhcp6

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/iana"
	"github.com/netagent/netagent/items"
)

// Lease is what a DHCPv6 server granted on one interface.
type Lease struct {
	Interface string     `json:"interface"`
	Address   netip.Addr `json:"address"`
	// Server is the server's DUID, in hex.
	Server string       `json:"server"`
	DNS    []netip.Addr `json:"dns,omitempty"`    // option 23
	Search []string     `json:"search,omitempty"` // option 24
	// Preferred and Valid are the address's lifetimes; T1 and T2 the
	// renewal and rebinding times of the IA_NA (0: the server left them
	// to the client). All count from Acquired.
	Preferred time.Duration `json:"preferred"`
	Valid     time.Duration `json:"valid"`
	T1        time.Duration `json:"t1"`
	T2        time.Duration `json:"t2"`
	Acquired  time.Time     `json:"acquired"`
	// Obtained is the message the REPLY answered: "solicit" (acquired),
	// "renew" or "rebind"; "kept" for a lease the state directory kept.
	Obtained string `json:"obtained,omitempty"`
	// Dropped says what of the server's REPLY check left out or changed,
	// one line each, for logs and status.
	Dropped []string `json:"dropped,omitempty"`
}

// Expires returns when the address's valid lifetime ends.
func (l *Lease) Expires() time.Time { return l.Acquired.Add(l.Valid) }

// ValidAt reports whether the address is still valid at now.
func (l *Lease) ValidAt(now time.Time) bool { return now.Before(l.Expires()) }

// PreferredUntil returns when the address's preferred lifetime ends.
func (l *Lease) PreferredUntil() time.Time { return l.Acquired.Add(min(l.Preferred, l.Valid)) }

// RenewAt returns T1: when to renew with the server. A server that leaves
// T1 to the client gets half the preferred lifetime (RFC 8415 21.4: 0.5
// times the shortest preferred lifetime).
func (l *Lease) RenewAt() time.Time {
	if l.T1 > 0 && l.T1 < l.Valid {
		return l.Acquired.Add(l.T1)
	}
	return l.Acquired.Add(l.base() / 2)
}

// RebindAt returns T2: when to ask any server. A server that leaves T2 to
// the client gets 0.8 times the preferred lifetime (RFC 8415 21.4); T2 is
// never before T1.
func (l *Lease) RebindAt() time.Time {
	at := l.Acquired.Add(l.base() * 4 / 5)
	if l.T2 > 0 && l.T2 < l.Valid {
		at = l.Acquired.Add(l.T2)
	}
	if r := l.RenewAt(); at.Before(r) {
		return r
	}
	return at
}

// base is the lifetime the default T1 and T2 count from: the preferred
// one, or the valid one when the server gave none.
func (l *Lease) base() time.Duration {
	if l.Preferred > 0 && l.Preferred <= l.Valid {
		return l.Preferred
	}
	return l.Valid
}

// SameBinding reports whether o binds the same address on the same
// interface, with the same DNS.
func (l *Lease) SameBinding(o *Lease) bool {
	return o != nil && l.Interface == o.Interface && l.Address == o.Address &&
		slices.Equal(l.DNS, o.DNS) && slices.Equal(l.Search, o.Search)
}

// String summarises the lease for logs and apply's report.
func (l *Lease) String() string {
	return fmt.Sprintf("%s on %s, DNS %v, search %v, valid %s", l.Address, l.Interface, l.DNS, l.Search, l.Valid)
}

// LinkDNS is the lease's DNS, as render merges it (Facts.LeaseDNS).
func (l *Lease) LinkDNS() items.LinkDNS {
	return items.LinkDNS{Dev: l.Interface, Nameservers: append([]netip.Addr(nil), l.DNS...), Search: append([]string(nil), l.Search...)}
}

// LeaseFromReply makes the lease of a REPLY received at acquired on
// ifname, held to check (an unusable address is ErrUnusable; what else is
// not usable is dropped; the lifetimes are clamped).
func LeaseFromReply(ifname string, reply *dhcpv6.Message, acquired time.Time) (*Lease, error) {
	if err := status(reply.Options.Status()); err != nil {
		return nil, err
	}
	ia := reply.Options.OneIANA()
	if ia == nil {
		return nil, ErrNoAddress
	}
	if err := status(ia.Options.Status()); err != nil {
		return nil, err
	}
	addr := ia.Options.OneAddress()
	if addr == nil {
		return nil, ErrNoAddress
	}
	a, ok := addr6(addr.IPv6Addr)
	if !ok || a.IsUnspecified() || addr.ValidLifetime <= 0 {
		return nil, ErrNoAddress
	}
	l := &Lease{Interface: ifname, Address: a, Preferred: addr.PreferredLifetime, Valid: addr.ValidLifetime,
		T1: ia.T1, T2: ia.T2, Acquired: acquired}
	if sid := reply.Options.ServerID(); sid != nil {
		l.Server = fmt.Sprintf("%x", sid.ToBytes())
	}
	for _, d := range reply.Options.DNS() {
		if a, ok := addr6(d); ok {
			l.DNS = append(l.DNS, a)
		}
	}
	if s := reply.Options.DomainSearchList(); s != nil {
		l.Search = append(l.Search, s.Labels...)
	}
	if err := check(l); err != nil {
		return nil, err
	}
	return l, nil
}

// status turns a status code option other than Success into ErrRefused.
func status(s *dhcpv6.OptStatusCode) error {
	if s == nil || s.StatusCode == iana.StatusSuccess {
		return nil
	}
	return fmt.Errorf("%w: %s (%s)", ErrRefused, s.StatusCode, s.StatusMessage)
}

// addr6 converts an IPv6 net.IP.
func addr6(ip net.IP) (netip.Addr, bool) {
	if len(ip) != net.IPv6len {
		return netip.Addr{}, false
	}
	return netip.AddrFrom16([16]byte(ip)), true
}
