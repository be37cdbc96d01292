// Package lease is when the daemon's DHCP leases renew: one scheduler,
// generic over the family (DHCPv4 and DHCPv6), that owns the leases in
// use on each interface and every timer after a lease is acquired.
//
// # What it owns
//
// The lease items' configurators (configurators/dhcp, configurators/dhcp6)
// acquire a lease as an asynchronous operation of the reconciler and hold
// it in their Book. A Scheduler takes in what the book holds (Sync, after
// each reconcile) and from then on owns the lease: the lease in use on each
// interface (what render's Facts are made of), when it is next due (T1: a
// renewal with its server; T2: a rebinding with any server; its expiry:
// it is let go), the exchange in flight on it, why the last one failed,
// what render refused of it (Refusals), and the leases let go whose items
// must leave the current state so that they are acquired afresh
// (TakeRestarts). Status rows (Statuses) are made from that state alone.
//
// # The rules, once for both families
//
//   - A lease is due at T1, renews until T2, rebinds until its expiry,
//     and expires then, also while an exchange on it hangs (Action).
//   - An exchange that is not answered, or answered with a lease no host
//     can take (Family.Unusable), keeps the lease held and is tried again
//     at half the time left until T2 (renewing) or the expiry (rebinding),
//     at least 5 s apart (RetryAt, RFC 2131 4.4.5); a renewal that ran
//     into T2 rebinds at once. The clients pace their exchanges on each
//     interface themselves (internal/leasebook's Pacer), so no server's
//     answer makes them storm.
//   - A refusal (a NAK, a server taking the address back) lets the lease
//     go at once, as its expiry does: the book and the state directory
//     forget it, the intent renders without it, and after the reconcile
//     that withdrew its address its item leaves the current state, so the
//     next reconcile acquires a lease again (two steps: nothing depending
//     on an item changes while an operation on it is in flight).
//   - A lease whose binding or end changed renders the intent again
//     (Differs; a renewal refreshes its address's lifetime).
//   - The leases the state directory keeps are in use from the start, so
//     that a restart withdraws nothing: a family that holds them
//     (Family.HoldsKept, DHCPv6) renews them at T1 as any other; one that
//     does not (DHCPv4) keeps them in use while their items ask the
//     servers again (INIT-REBOOT), until a server answers, their item
//     goes, or they expire.
//
// # The caller's duties
//
// Every method but the exchanges runs on the caller's loop goroutine; a
// Scheduler is not safe for concurrent use. Due and the Report's Take
// never block: an exchange runs in its own goroutine, bounded by the end
// of its state (T2 or the expiry), and posts a Report to Config.Reports;
// the loop hands it back (Report.Take). After each call that returns
// Changes the caller renders again if asked (Changes.Rerender), reconciles
// if asked (Changes.Reconcile), and sets its one timer to Next.
//
// The one-shot commands use the same rules without a scheduler or a
// loop: the leases a state directory keeps (Family.Kept) before T1 are
// trusted as if their server had confirmed them (Fresh, TrustFresh; RFC
// 2131 4.4.5: nothing is asked of a server before T1); a round renders
// again only when the leases held differ from the last render's
// (SameLeases, Differs); and an exchange on a held lease is Extend over a
// family's Exchanger, bounded as the daemon's are and paced by the same
// clients.
//
// This package never imports the agent root.
package lease
