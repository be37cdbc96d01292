package dhcp

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items/lease4"
)

// ObtainedFound: the lease of another DHCP client (dhclient, networkd),
// found on the link by an adoption (FindLeases), not granted to netagent:
// its address and routes are taken over while the lease item asks for
// the address (INIT-REBOOT).
const ObtainedFound = "found"

// foundNL is the part of netlink.Handle FindLeases reads.
type foundNL interface {
	LinkByName(name string) (netlink.Link, error)
	AddrList(link netlink.Link, family int) ([]netlink.Addr, error)
	RouteListFiltered(family int, filter *netlink.Route, filterMask uint64) ([]netlink.Route, error)
}

var _ foundNL = (*netlink.Handle)(nil)

// FindLeases returns the leases other DHCP clients hold on ifnames in the
// namespace of t, as the kernel shows them (FoundLease); an interface that
// does not exist or has no such address has none.
func FindLeases(t *netnsx.Target, ifnames []string, now time.Time) (map[string]*Lease, error) {
	return findLeases(t.NL, ifnames, now)
}

func findLeases(nlh foundNL, ifnames []string, now time.Time) (map[string]*Lease, error) {
	out := map[string]*Lease{}
	for _, name := range ifnames {
		link, err := nlh.LinkByName(name)
		if err != nil {
			continue // not there (yet): nothing to find
		}
		var addrs []netlink.Addr
		var routes []netlink.Route
		err = retryDump(func() (err error) {
			if addrs, err = nlh.AddrList(link, netlink.FAMILY_V4); err != nil {
				return err
			}
			filter := &netlink.Route{LinkIndex: link.Attrs().Index, Table: unix.RT_TABLE_MAIN}
			routes, err = nlh.RouteListFiltered(netlink.FAMILY_V4, filter, netlink.RT_FILTER_OIF|netlink.RT_FILTER_TABLE)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("finding the DHCPv4 lease on %s: %w", name, err)
		}
		if l := FoundLease(name, addrs, routes, now); l != nil {
			out[name] = l
		}
	}
	return out, nil
}

// retryDump runs f again while a dump it makes is interrupted (the
// kernel's tables changed under it), a few times.
func retryDump(f func() error) error {
	var err error
	for range 5 {
		if err = f(); !errors.Is(err, netlink.ErrDumpInterrupted) {
			return err
		}
	}
	return err
}

// FoundLease makes, of an interface's IPv4 addresses and main-table routes
// read at now, the lease another DHCP client holds there: the first
// primary global address with a finite valid lifetime (a DHCP client
// gives its address the lease's lifetime: networkd, dhclient and dhcpcd
// do; an address without one is static) and, as the router, the gateway
// of the default route through the interface of the lowest metric (one
// with the address as source first). The server, DNS servers and
// classless routes are unknown until a server answers. The lease is taken
// as half spent: its expiry is the address's, and its renewal time (T1)
// is now, so that nothing trusts it as confirmed. nil when there is no
// such address, or it is one no host can have (lease4.Check).
func FoundLease(ifname string, addrs []netlink.Addr, routes []netlink.Route, now time.Time) *Lease {
	p, left, ok := leasedAddress(addrs)
	if !ok {
		return nil
	}
	l := &Lease{Interface: ifname, Address: p, LeaseTime: 2 * left, Renew: left, Rebind: 2 * left * 7 / 8,
		Acquired: now.Add(-left), Obtained: ObtainedFound, Router: foundRouter(routes, p.Addr())}
	if lease4.Check(l) != nil {
		return nil
	}
	return l
}

// leasedAddress is the address of addrs that a DHCP client left, and its
// valid lifetime left.
func leasedAddress(addrs []netlink.Addr) (netip.Prefix, time.Duration, bool) {
	for _, a := range addrs {
		if a.IPNet == nil || a.Scope != unix.RT_SCOPE_UNIVERSE || a.Flags&(unix.IFA_F_PERMANENT|unix.IFA_F_SECONDARY) != 0 ||
			a.ValidLft <= 0 || uint32(a.ValidLft) == 0xffffffff {
			continue
		}
		ip, ok := addr4(a.IP)
		ones, bits := a.Mask.Size()
		if !ok || bits != 32 {
			continue
		}
		return netip.PrefixFrom(ip, ones), time.Duration(a.ValidLft) * time.Second, true
	}
	return netip.Prefix{}, 0, false
}

// foundRouter is the gateway of the default route of routes that a DHCP
// client of the address src added: one with src as its source first, then
// the lowest metric; invalid when there is none.
func foundRouter(routes []netlink.Route, src netip.Addr) netip.Addr {
	var best *netlink.Route
	better := func(r *netlink.Route) bool {
		if best == nil {
			return true
		}
		rs, bs := r.Src.Equal(src.AsSlice()), best.Src.Equal(src.AsSlice())
		return rs && !bs || rs == bs && r.Priority < best.Priority
	}
	for i := range routes {
		r := &routes[i]
		if isDefault(r.Dst) && r.Gw != nil && len(r.MultiPath) == 0 && better(r) {
			best = r
		}
	}
	if best == nil {
		return netip.Addr{}
	}
	gw, _ := addr4(best.Gw)
	return gw
}

// isDefault reports whether dst is the default destination (nil or
// 0.0.0.0/0, as the library reports it).
func isDefault(dst *net.IPNet) bool {
	if dst == nil {
		return true
	}
	ones, _ := dst.Mask.Size()
	return ones == 0
}

// found are the leases of other clients an adoption took over
// (Leases.SetFound): their lease items read back Kept and ask for the
// address, as for a lease the state directory keeps.
type found struct {
	mu sync.Mutex
	m  map[string]*Lease
}

// SetFound holds the leases other DHCP clients hold (FindLeases), by
// interface, for the lease items of an adoption: each reads back Kept
// (ReadBack) where the intent has one and nothing else holds or keeps a
// lease, and its create or modify asks for its address (INIT-REBOOT).
// They are never released: they are not netagent's.
func (b *Leases) SetFound(m map[string]*Lease) {
	b.found.mu.Lock()
	defer b.found.mu.Unlock()
	b.found.m = m
}

// foundAll returns a copy of the found leases, by interface.
func (b *Leases) foundAll() map[string]*Lease {
	b.found.mu.Lock()
	defer b.found.mu.Unlock()
	return maps.Clone(b.found.m)
}

// Found returns the found lease of ifname (SetFound), nil when none.
func (b *Leases) Found(ifname string) *Lease {
	b.found.mu.Lock()
	defer b.found.mu.Unlock()
	return b.found.m[ifname]
}
