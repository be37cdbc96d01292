package dhcp

import (
	"net"
	"net/netip"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/netagent/netagent/items/lease4"
)

// Lease is what a DHCPv4 server granted on one interface (package
// lease4: pure data, which render reads too).
type Lease = lease4.Lease

// Route is one classless static route of a lease (option 121).
type Route = lease4.Route

// LeaseFromACK makes the lease of an ACK received at acquired on ifname,
// held to lease4.Check: an address no host can have is ErrUnusable; a
// router, DNS server, route or search domain that is not usable is left
// out (Lease.Dropped says which), and the times are clamped.
func LeaseFromACK(ifname string, ack *dhcpv4.DHCPv4, acquired time.Time) (*Lease, error) {
	addr, ok := addr4(ack.YourIPAddr)
	if !ok || addr.IsUnspecified() {
		return nil, ErrNoAddress
	}
	leaseTime := ack.IPAddressLeaseTime(0)
	if leaseTime <= 0 {
		return nil, ErrNoLeaseTime
	}
	bits := 32
	if m := ack.SubnetMask(); m != nil {
		ones, size := m.Size()
		if size != 32 {
			return nil, ErrBadNetmask
		}
		bits = ones
	}
	l := &Lease{
		Interface: ifname,
		Address:   netip.PrefixFrom(addr, bits),
		LeaseTime: leaseTime,
		Renew:     ack.IPAddressRenewalTime(leaseTime / 2),
		Rebind:    ack.IPAddressRebindingTime(leaseTime * 7 / 8),
		Acquired:  acquired,
	}
	l.Server, _ = addr4(ack.ServerIdentifier())
	if r := ack.Router(); len(r) > 0 {
		l.Router, _ = addr4(r[0])
	}
	for _, d := range ack.DNS() {
		if a, ok := addr4(d); ok {
			l.DNS = append(l.DNS, a)
		}
	}
	if dl := ack.DomainSearch(); dl != nil {
		l.Domains = append(l.Domains, dl.Labels...)
	} else if dn := ack.DomainName(); dn != "" {
		l.Domains = []string{dn}
	}
	for _, r := range ack.ClasslessStaticRoute() {
		l.Routes = append(l.Routes, routeOf(r))
	}
	if err := lease4.Check(l); err != nil {
		return nil, err
	}
	return l, nil
}

func routeOf(r *dhcpv4.Route) Route {
	ones, _ := r.Dest.Mask.Size()
	dst, _ := addr4(r.Dest.IP)
	out := Route{Dst: netip.PrefixFrom(dst, ones).Masked()}
	if via, ok := addr4(r.Router); ok && !via.IsUnspecified() {
		out.Via = via
	}
	return out
}

// addr4 converts an IPv4 net.IP.
func addr4(ip net.IP) (netip.Addr, bool) {
	if ip4 := ip.To4(); ip4 != nil {
		return netip.AddrFrom4([4]byte(ip4)), true
	}
	return netip.Addr{}, false
}
