// Package dhcp6 is netagent's DHCPv6 client (github.com/insomniacslk/dhcp,
// its nclient6): it acquires a lease (IA_NA: one address, with the DNS
// servers and search domains of the reply) on one interface of a target
// namespace, and keeps leases in the state directory, so that a restarted
// agent asks the server for the same address again and renders it at once.
//
// The network is behind one narrow interface, Exchanger: NetnsExchanger
// waits (on netlink address events) for the interface's link-local
// address to be usable, opens nclient6's UDP socket inside the target
// namespace (only the socket: the exchange itself holds no namespace
// thread) and runs SOLICIT-ADVERTISE-REQUEST-REPLY; tests use a fake that
// answers with a built REPLY. The client identifies itself with a DUID-LL
// of the interface's MAC address, stable across restarts.
//
// Configurator manages items.DHCP6Lease: its Create acquires the lease as
// an asynchronous operation (reconciler.ContinueInBackground), so the
// reconciler converges every item that does not depend on the lease while
// the server has not answered. The lease goes into Leases and the state
// directory; ReadBack returns the lease item of an interface whose kept
// lease has not expired, so that a fresh read-back (each pass of an apply,
// a restart) does not ask again. Render turns a known lease (Facts) into
// its address (a /128, depending on the lease item) and its DNS.
//
// Each REPLY (and each kept lease) is held to check, the rules of a
// DHCPv4 lease (lease4.Check): an address that is not global unicast is
// ErrUnusable, DNS servers and search domains that cannot be used are
// dropped (Lease.Dropped), the lifetimes are clamped; the address goes to
// the kernel with its preferred and valid lifetimes each as given. The
// exchanges are paced as DHCPv4's (leasebook.Pacer).
//
// Client.Renew and Rebind extend a lease (RENEW to its server's DUID at
// T1, REBIND to any server at T2: Lease.RenewAt and RebindAt, RFC 8415's
// defaults when the server leaves them to the client); the daemon's loop
// owns those timers (agent/lease). Delete gives the lease back
// (RELEASE) when the intent drops dhcp6, and keeps it through a carrier
// loss, so that the client asks for the same address again.
package dhcp6
