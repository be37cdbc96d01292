// Package l3 configures the layer-3 objects of a network namespace:
// addresses, routes, policy rules and permanent neighbour entries, one
// configurator per item type of package items, and reads the kernel's
// objects of these kinds back into items.
//
//	Register(reg, t)                      ReadBack(t, hint)
//	   │                                       │
//	   ├─ address   ──┐                        ├─ addresses with IFA_PROTO 211
//	   ├─ route     ──┼─▶ shared conn ──▶ kernel (rtnetlink in t's namespace)
//	   ├─ rule      ──┤   (pipelined)          ├─ routes, rules with protocol 211
//	   └─ neighbor  ──┘                        └─ neighbours with NDA_PROTOCOL 211
//	        │
//	        └─ route (configurator), rule and link dumps: t.NL (netlink.Handle)
//
// # Ownership marks
//
// Everything netagent creates carries the number items.RouteProtocol (211)
// in the kernel object itself, and only objects carrying it are read back,
// changed or deleted; an object of the same identity without it is someone
// else's, and managing it fails with ErrNotOwned, never a takeover:
//
//	route     rtm_protocol 211
//	rule      FRA_PROTOCOL 211
//	address   IFA_PROTO 211      (Linux 5.18; the library's netlink.Addr has no such field)
//	neighbor  NDA_PROTOCOL 211   (Linux 5.0; netlink.Neigh has no such field)
//
// A mark in the kernel object survives an agent restart (a new process
// reads it back), dies with the object, and is never on an object someone
// else re-adds later. The alternatives were worse: an address label exists
// only for IPv4 and is the intent's to set; a state file under a state
// directory claims whatever has the recorded address, including an address
// an administrator added after ours went away, and goes stale across
// reboots. Create checks that the kernel kept IFA_PROTO or NDA_PROTOCOL and
// fails with ErrNoMark (removing the object again) on a kernel too old to
// keep it, so an old kernel fails safe rather than leaving objects a
// restarted agent would take for someone else's. iproute2 shows the marks
// as "proto 211" (routes, rules, neighbours; addresses from iproute2 6.2).
//
// The library cannot send IFA_PROTO or NDA_PROTOCOL, a rule add without
// NLM_F_EXCL, or many requests at once, so every change goes over one
// extra rtnetlink socket per target (conn), opened lazily inside the
// target's namespace with the Target's namespace handle, shared by the four
// configurators one operation at a time, and kept for the life of the
// process (a broken one is replaced). The messages are the library's own
// types (package nl). Dumps of rules and links, and the route
// configurator's own route dumps, use t.NL; dumps of addresses and
// neighbours, and the route dumps of read-back, of the batch and of
// Clashes, use the conn, to see the marks and to filter in the kernel
// (rawOps.dumpFiltered);
// interface names are resolved with SIOCGIFINDEX on the conn's socket (in
// its namespace).
//
// Routes have one codec (route_nl.go): routeMsg is the rtmsg and the
// attributes netagent writes and reads (table in RTA_TABLE, rtm_table
// only below 256; dst, gateway, oif, priority, prefsrc, scope, type,
// protocol, the onlink flag, RTA_MULTIPATH with each nexthop's gateway,
// device, weight less one in rtnh_hops and onlink flag, RTAX_MTU in
// RTA_METRICS, RTA_PREF). encodeRoute and decodeRoute map an items.Route
// to and from it, request and parseRouteMsg map it to and from the wire
// (the writer's requests; the raw RTM_GETROUTE dumps of the route batch,
// Clashes and read-back), and routeMsgOf maps a netlink.Route to it, so
// each attribute is encoded and decoded in exactly one place;
// route_codec_test.go round-trips every route shape. Only the onlink bit
// of the flags is read: the kernel adds linkdown and dead by itself. A
// route with what no item holds (a tos, a nexthop object, an
// encapsulation, another metric) decodes to nothing.
//
// Rules likewise (rule_nl.go): ruleMsg is the fib_rule_hdr and every
// attribute netagent writes (src, dst, priority, table, fwmark/mask,
// iif, oif, goto, protocol, ip proto, port ranges, uid range,
// suppress_prefixlength; the invert flag and the action in the header);
// encodeRule/decodeRule and request/parseRuleMsg, over raw RTM_GETRULE
// dumps (the library's netlink.Rule does not read the action).
//
// # Operations, idempotence, and the kernel's surprises
//
// Routes (a reconciler.BatchConfigurator). Create is RTM_NEWROUTE with
// NLM_F_CREATE|NLM_F_EXCL; on EEXIST the routes of that identity (table,
// dst, metric, tos 0) are looked at: ours as wanted is success, ours
// otherwise is replaced, another protocol's is ErrNotOwned. Modify
// compares the kernel's route with the new item and sends NLM_F_REPLACE
// only if they differ (no write when the kernel already matches; gateway,
// device, source, scope and type change in place). Delete is RTM_DELROUTE
// naming the protocol, which both fib_table_delete and ip6_route_del
// compare, so the kernel itself never deletes another protocol's route;
// ESRCH is success unless another protocol's route holds the identity
// (ErrNotOwned). The kernel takes metric 0 in an IPv4 delete as "any
// metric": such a delete asks for the deleted route back (NLM_F_ECHO) and
// re-adds it if it was not the one meant. ApplyBatch sends all its requests
// pipelined, 128 per sendmsg with one ack per chunk, and dumps a family's
// routes at most once per batch, only when an answer or a modify needs it.
// Device names are resolved once per batch (an interface can be renamed
// and its name reused, so indexes are not remembered longer).
//
// Rules. The item's name holds every selector and the action, and the
// kernel cannot change a rule in place, so Modify never writes (two items of one name
// differ only in Deps; anything else is ErrNeedsRecreate). Create looks for
// a rule with exactly the item's selectors: ours is success, another
// protocol's is ErrNotOwned; otherwise it adds without NLM_F_EXCL, because
// the kernel's existence check takes an unset source as a wildcard ("from
// all" would clash with "from 10.0.0.0/8" of the same priority and table).
// A delete matches the same way (a request without iif hits a rule with
// one; the "not" flag and a goto's target are not compared at all), so
// Delete first takes out our rules of the same priority and action listed
// before the item that the request would hit, and puts them back.
//
// Addresses. Create adds with NLM_F_EXCL, the mark and, for IPv6,
// IFA_F_NODAD: the address is usable at once rather than tentative during
// duplicate address detection (which never ends on a link without
// carrier); netagent addresses are planned, not autoconfigured. IPv4
// addresses get the subnet broadcast. Ours already there as wanted is
// success; ours with another label or scope is deleted and added again;
// someone else's (the same IPv4 address and length, or the same IPv6
// address of any length) is ErrNotOwned. Label and scope cannot change in
// place (a replace keeps the old ones), so Modify never writes and items'
// NeedsRecreate asks for a recreate. Delete refuses (ErrNotOwned) when the
// kernel would take others' objects with the address: the last IPv4
// address of an interface flushes every IPv4 route through it. A primary
// IPv4 address would take its subnet's secondaries with it (and, with the
// last of them, every route through the interface) unless
// promote_secondaries is on: Delete turns it on for the interface for the
// one delete and puts it back, so that a new address added beside the old
// one (make before break) is promoted and the routes stay. Addresses the intent does not declare (the
// kernel's fe80:: link-local addresses, an administrator's) carry no mark
// and are never read back or deleted.
//
// Neighbours. A permanent entry with the mark. Create and Modify add it, or
// replace ours if the MAC differs (no write if the kernel has it). An entry
// the kernel learned (reachable, stale, failed...) is only its cache and is
// replaced; someone's static entry (permanent, noarp, externally learned)
// is ErrNotOwned. Delete leaves a learned entry that took ours' place.
//
// Deleting what is gone (or whose interface is gone) succeeds everywhere.
//
// # NeedsRecreate
//
// Every configurator delegates to items.NeedsRecreate: an address whose
// Label or Scope changes is recreated; routes, rules and neighbours never
// are (a route's identity and every selector of a rule are in their names;
// a neighbour's MAC changes in place).
//
// # Read-back
//
// ReadBack returns the marked objects of every table and both families as
// items that Equal what was applied. The kernel fills some fields in by
// itself; with the intended graph as hint, they read back as the intended
// item has them: a route's device when only a gateway was given, an IPv6
// route's scope (the kernel keeps none), table 0 for main, IPv6 metric 0
// for 1024, an IPv4 address label equal to the interface name, a rule's
// default fwmark mask. The fields that only shape dependencies (a route's
// CarrierLink, GwAddress and Deps, a rule's and a neighbour's Deps) are
// copied from the hint, except that a route's address dependencies are
// anchored to the addresses the kernel has: the hint's address when it is
// there, else the read-back address that holds the gateway (or the
// source). A route depends on what holds it up now, so that when the
// intent moves it to a new address it is modified once that address
// exists (make before break) instead of being withdrawn at once for want
// of it.
//
// A route that reads back Equal to its hint is the hint's item itself: the
// current state of a converged namespace shares its routes with the
// intended graph instead of holding a copy of each (read-back never
// changes an item it returns in place; anchoring copies). The route dump
// is decoded message by message as it arrives, without collecting it. A
// route's hint is found by walking the intended graph's journal beside
// the dump (routeCursor: the kernel dumps in prefix order, the order of
// a generated or sorted intent), and looked up by name only when the next
// few routes there are not it.
// IPv6 reject routes, which the kernel puts on lo, read back without a
// device. Every other rule, except the kernel's own (protocol kernel), is
// read back as an items.Foreign (an external item: never changed or
// deleted, listed by show, named by check when it holds an intended item's
// identity), and so are our routes that no item can describe (a route
// with a tos; a rule with a tos, realm or tunnel id), which are not
// silently dropped. Other protocols' routes are not read back: the route
// dump asks the kernel for netagent's protocol only (routeFilter, with
// strict checking: docs/route-filtering.md), so that another owner's full
// table costs nothing but the kernel's walk. Only when an intended route
// is missing are the routes of its table dumped, and another protocol's
// route holding its identity read back as Foreign (clashingRoutes);
// ReadForeignAddrNeigh reads them all for `show --all`. The route batch
// and Clashes dump only the tables of their routes (routeTables). A multipath route's
// address dependencies are anchored like a gateway's, to the addresses
// that put its nexthops' gateways on-link.
//
// ForeignAtRisk and RestoreForeign (atrisk.go) are for a trial's exact
// revert: the first saves, as the kernel describes them, the routes
// (of the kernel's own, only an IPv6 link's multicast route) and static
// neighbours not marked ours through some links, which the kernel drops by itself
// when those links go, are set down or lose an address; the second adds
// back the ones missing, on the interfaces of the same names.
//
// Clashes is read-back's counterpart for a plan: the intended items whose
// identity an object of another protocol holds, each with the ErrNotOwned
// error its create fails with.
//
// # Testing without root
//
// The configurators reach the kernel only through narrow interfaces,
// gathered in kernel (register.go): rawOps (requests, the link, address,
// neighbour and read-back's route dumps, interface indexes), dumpNL (the
// route and rule dumps of netlink.Handle) and the two promote_secondaries
// hooks.
// ReadBack, Clashes and NewRefusals run over the same interfaces
// (readBack, clashes, newRefusals). fake.go backs them all with
// FakeKernel, an in-memory rtnetlink (an ordinary file of the package, as
// tailscale's linuxfw/fake.go, so that other packages' tests run the real
// configurators over it: FakeKernel.Register and FakeKernel.ReadBack; not
// a package of its own, since it implements rawOps, whose replies are the
// package's own type, and the package's tests use it): it parses the requests the
// configurators serialize, keys each object as the kernel does (route:
// table, dst, tos, priority; IPv4 address: interface, local, length; IPv6
// address: interface, address; neighbour: interface, address; rule: every
// selector and the priority), keeps the protocol each object was given,
// answers with the kernel's errors (EEXIST, ESRCH, ENOENT, EADDRNOTAVAIL,
// ENODEV, ENETUNREACH) and follows the kernel's side effects (subnet
// routes of addresses, promotion or loss of secondaries, the route flush
// with an interface's last IPv4 address, "any metric" in an IPv4 route
// delete, rule_find's partial match). Its links are the names it was
// made with, or those of another fake of the same namespace
// (FakeKernel.Links). fake_configurators_test.go runs
// every configurator over it; the real-kernel tests (l3_test.go,
// test/netns/l3_*) stay the reference, and a behaviour the fake gets wrong
// is fixed in the fake against them.
//
// To test a new kind with the fake: teach FakeKernel its request and dump
// messages (parse the request, key the object as the kernel does, return
// the kernel's errno, keep the protocol; add an add* helper that plants
// someone else's object); then, with newFakeEnv, test create, create again
// (no write: fakeEnv.writes), modify in place, delete and delete again, a
// foreign object at the same key (ErrNotOwned, untouched), read-back of
// only the owned objects Equal to what was applied, and a clash; and check
// each test fails when the behaviour it names is broken.
package l3
