package firewall

import "errors"

// Sentinel errors; the errors the configurators return wrap them and name
// the object.
var (
	// ErrNotOwned: a chain of that name exists but carries no netagent
	// mark. It is someone else's and is neither taken over nor deleted.
	ErrNotOwned = errors.New("not owned by netagent")
	// ErrBadArgument: a rule argument holds a character (newline, NUL) that
	// the line-based iptables-restore format cannot carry.
	ErrBadArgument = errors.New("argument cannot be passed to iptables-restore")
	// ErrBadKey: a sysctl key is not a net.* key that maps to a file under
	// /proc/sys/net.
	ErrBadKey = errors.New("not a net.* sysctl key")
	// ErrNoTools: the iptables programs of the item's address family
	// (iptables, iptables-save, iptables-restore, or the ip6tables ones, in
	// any variant) are not on PATH. Only firewall chains need them.
	ErrNoTools = errors.New("iptables programs not found")
	// ErrFamily: an item names an address family other than ipv4 or ipv6.
	ErrFamily = errors.New("unsupported address family")
)
