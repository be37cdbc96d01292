// Package lease4 is the data of a DHCPv4 lease (Lease: address, server,
// router, DNS servers and search domains, classless routes, times) and the
// items a held lease makes (Items). It is pure data, without the client
// (configurators/dhcp) or the kernel, so that render can make the items
// of a lease from the facts it is given, and whoever writes resolv.conf
// can read a lease's DNS servers and search domains (Lease.DNS,
// Lease.Domains) from dhcp.Leases or the daemon's status.
package lease4

import (
	"fmt"
	"net/netip"
	"slices"
	"time"
)

// Lease is what a DHCPv4 server granted on one interface.
type Lease struct {
	Interface string       `json:"interface"`
	Address   netip.Prefix `json:"address"` // with the subnet's length
	Server    netip.Addr   `json:"server"`  // option 54
	// Router is the first router of option 3; invalid when none was given.
	Router netip.Addr   `json:"router,omitzero"`
	DNS    []netip.Addr `json:"dns,omitempty"` // option 6
	// Routes are the classless static routes of option 121; when any are
	// given, RFC 3442 says Router is not used for a default route.
	Routes []Route `json:"routes,omitempty"`
	// LeaseTime, Renew (T1) and Rebind (T2) count from Acquired; Renew
	// and Rebind default to 1/2 and 7/8 of LeaseTime (RFC 2131 4.4.5).
	LeaseTime time.Duration `json:"leaseTime"`
	Renew     time.Duration `json:"renew"`
	Rebind    time.Duration `json:"rebind"`
	Acquired  time.Time     `json:"acquired"`
	// Obtained says how: ObtainedDiscover, ObtainedReboot, ... (client.go).
	Obtained string `json:"obtained,omitempty"`
	// Domains are the search domains (option 119, else the domain name
	// of option 15), for whoever writes resolv.conf.
	Domains []string `json:"domains,omitempty"`
	// Dropped says what of the server's answer Check left out or changed
	// (a DNS server that is not unicast, a search domain that is not a
	// DNS name, a T1 of 0, ...), one line each, for logs and status.
	Dropped []string `json:"dropped,omitempty"`
}

// RenewAt, RebindAt return when T1 and T2 fall.
func (l *Lease) RenewAt() time.Time  { return l.Acquired.Add(l.Renew) }
func (l *Lease) RebindAt() time.Time { return l.Acquired.Add(l.Rebind) }

// ValidAt reports whether the lease still holds at t.
func (l *Lease) ValidAt(t time.Time) bool { return t.Before(l.Expires()) }

// SameBinding reports whether l and o grant the same things (address,
// server, router, DNS, routes, domains): a renewal that only moves the
// times changes only the address's lifetime (Items: ValidUntil).
func (l *Lease) SameBinding(o *Lease) bool {
	return l.Interface == o.Interface && l.Address == o.Address && l.Server == o.Server && l.Router == o.Router &&
		slices.Equal(l.DNS, o.DNS) && slices.Equal(l.Routes, o.Routes) && slices.Equal(l.Domains, o.Domains)
}

// Route is one classless static route of a lease (option 121). An
// invalid Via is a route on the link itself (router 0.0.0.0).
type Route struct {
	Dst netip.Prefix `json:"dst"`
	Via netip.Addr   `json:"via,omitzero"`
}

// Expires returns when the lease ends.
func (l *Lease) Expires() time.Time { return l.Acquired.Add(l.LeaseTime) }

// String summarises the lease for logs and apply's report.
func (l *Lease) String() string {
	return fmt.Sprintf("%s on %s from %s, gateway %s, DNS %v, lease %s", l.Address, l.Interface, l.Server,
		orNone(l.Router), l.DNS, l.LeaseTime)
}

func orNone(a netip.Addr) string {
	if !a.IsValid() {
		return "none"
	}
	return a.String()
}
