package render

import (
	"net/netip"
	"time"

	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/items/lease4"
)

// Facts are what rendering needs to know of the host and the network and
// cannot read from the intent. The zero value knows of no lease, on a host
// that does not forward, where the agent does not handle DNS. The caller
// (the daemon's loop, the one-shot apply) takes them from the kernel,
// dhcp.Leases (configurators/dhcp) and the state directory; render itself
// reads nothing.
type Facts struct {
	// Leases are the DHCPv4 leases held, by interface (dhcp4.go).
	Leases map[string]*lease4.Lease
	// IPv6Forwarding: net.ipv6.conf.all.forwarding is 1 in the kernel.
	// The intent's own forwarding keys win over it.
	IPv6Forwarding bool
	// ResolvConf is the resolv.conf path the agent hands DNS to (the
	// --resolv-conf flag; its configurator decides between writing it
	// and systemd-resolved): "": the agent does not handle DNS, and the
	// intent's dns section renders nothing.
	ResolvConf string
	// LeaseDNS are the DNS servers and search domains of the DHCPv6
	// leases held, one per interface (section_dns.go merges them with
	// those of Leases).
	LeaseDNS []items.LinkDNS
	// DHCP6 is the DHCPv6 lease held on each interface (ipv6.go renders
	// its address, depending on the lease item).
	DHCP6 map[string]Lease6
}

// Lease6 is what render needs of a DHCPv6 lease: its address, and when the
// address's valid lifetime ends (the kernel's valid_lft: the kernel drops
// the address then, should the agent be gone; a renewal moves it).
type Lease6 struct {
	Address    netip.Addr
	ValidUntil time.Time
	// PreferredUntil is when its preferred lifetime ends (the kernel's
	// preferred_lft), never after ValidUntil.
	PreferredUntil time.Time
}
