package dhcp6

import "errors"

// Errors of a server's answer that cannot make a lease.
var (
	// ErrNoAddress: the REPLY has no IA_NA address.
	ErrNoAddress = errors.New("the server's REPLY gives no address (IA_NA)")
	// ErrRefused: the REPLY's status (or its IA_NA's) is not Success.
	ErrRefused = errors.New("the server refused")
	// ErrUnusable: the REPLY's address is not one a host can have
	// (multicast, loopback, link-local, unspecified: check); the lease is
	// refused.
	ErrUnusable = errors.New("the server's lease is unusable")
	// ErrNoLinkLocal: the interface has no usable link-local address to
	// send from (IPv6 off, or duplicate address detection failed).
	ErrNoLinkLocal = errors.New("no usable IPv6 link-local address")
)

// errModify: the reconciler modified a lease in place, which
// NeedsRecreate rules out.
var errModify = errors.New("a lease is not modified in place (NeedsRecreate)")
