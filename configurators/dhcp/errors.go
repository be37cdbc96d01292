package dhcp

import (
	"errors"

	"github.com/netagent/netagent/items/lease4"
)

// Errors of a server's answer that cannot make a lease.
var (
	// ErrNoAddress: the ACK gives no address (yiaddr 0.0.0.0).
	ErrNoAddress = errors.New("the server's ACK gives no address")
	// ErrNoLeaseTime: the ACK has no lease time (option 51), which RFC
	// 2131 requires of an ACK to a REQUEST.
	ErrNoLeaseTime = errors.New("the server's ACK has no lease time (option 51)")
	// ErrBadNetmask: the subnet mask (option 1) is not a contiguous mask.
	ErrBadNetmask = errors.New("the server's subnet mask is not a contiguous mask")
	// ErrUnusable: the ACK's address cannot be a host's (loopback,
	// multicast, broadcast, a prefix length of 0, ...: lease4.Check); the
	// lease is refused.
	ErrUnusable = lease4.ErrUnusable
	// ErrNAK: the server refused the address asked for (DHCPNAK): the
	// client starts again with a DISCOVER.
	ErrNAK = errors.New("the server refused the address (DHCPNAK)")
	// ErrNoLease: no server granted a lease in the time allowed.
	ErrNoLease = errors.New("no DHCPv4 server answered in time")
)

// errModify: the reconciler modified a lease in place, which
// NeedsRecreate rules out.
var errModify = errors.New("a lease is not modified in place (NeedsRecreate)")
