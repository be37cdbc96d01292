package render

import (
	"net/netip"

	"github.com/netagent/netagent/items"
)

// Facts are what rendering needs to know of the host and cannot read
// from the intent. The zero value is a host that does not forward, where
// the agent does not handle DNS.
type Facts struct {
	// IPv6Forwarding: net.ipv6.conf.all.forwarding is 1 in the kernel.
	// The intent's own forwarding keys win over it.
	IPv6Forwarding bool
	// ResolvConf is the resolv.conf path the agent hands DNS to (the
	// --resolv-conf flag; its configurator decides between writing it
	// and systemd-resolved): "": the agent does not handle DNS, and the
	// intent's dns section renders nothing.
	ResolvConf string
	// LeaseDNS are the DNS servers and search domains of the leases held,
	// one per interface (section_dns.go merges them).
	LeaseDNS []items.LinkDNS
	// DHCP6 is the address of the DHCPv6 lease held on each interface
	// (ipv6.go renders it, depending on the lease item).
	DHCP6 map[string]netip.Addr
}
