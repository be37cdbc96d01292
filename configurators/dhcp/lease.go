package dhcp

import (
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
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

// LeaseFromACK makes the lease of an ACK received at acquired on ifname.
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
	for _, r := range ack.ClasslessStaticRoute() {
		l.Routes = append(l.Routes, routeOf(r))
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
