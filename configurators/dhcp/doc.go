// Package dhcp is netagent's DHCPv4 client (github.com/insomniacslk/dhcp,
// its nclient4): it acquires a lease on one interface of a target
// namespace and turns the server's ACK into a Lease (address, server,
// router, DNS servers, classless routes of option 121, lease, renewal and
// rebinding times), and keeps leases in the state directory so that a
// restarted agent can ask for its address again (INIT-REBOOT, RFC 2131
// 3.2).
//
// The network is behind one narrow interface, Exchanger: NetnsExchanger
// opens nclient4's raw socket inside the target namespace (only the
// socket: the exchange itself, which takes seconds, holds no namespace
// thread), and tests use a fake that answers with a built ACK.
//
// Configurator manages items.DHCP4Lease: its Create acquires the lease as
// an asynchronous operation (reconciler.ContinueInBackground), so the
// reconciler converges every item that does not depend on the lease while
// the server has not answered, and items that depend on the lease item
// wait for it. A lease kept in the state directory and still valid is
// asked for again first (INIT-REBOOT); ReadBack reads such a lease's item
// back marked Kept, so that the reconciler's Modify asks for it while its
// address and routes stay in the kernel. The lease goes into Leases and
// the state directory.
//
// A server is not trusted: every ACK (and every lease the state
// directory keeps) is held to lease4.Check, the intent's own rules for
// addresses and names. A lease whose address no host can have is refused
// (ErrUnusable); a router, DNS server, route or search domain that cannot
// be used is left out and named in Lease.Dropped; T1, T2 and the lease
// time are clamped. Every exchange on an interface waits its turn on the
// Client's leasebook.Pacer (at least a second apart, backing off after a
// NAK or an unusable answer), for the daemon and the one-shot alike.
//
// The lease's data (Lease) and the items it makes (LeaseItems: address,
// routes) are in the pure package items/lease4, which render uses: the
// intent is rendered with the leases held (render.Facts). Client.Renew
// and Client.Rebind extend a lease (the daemon's loop calls them at T1
// and T2: agent/lease); the lease's address carries the
// lease's end as its kernel lifetime (items.Address.ValidUntil), so a new
// end refreshes it. Configurator.Delete gives a lease back
// (Client.Release, DHCPRELEASE) and forgets the kept one when the intent
// drops dhcp4 on an interface whose carrier is up; a lease let go with the
// carrier is kept for INIT-REBOOT.
package dhcp
