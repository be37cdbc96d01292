// Package intent defines netagent's intent format: the JSON document in which
// an operator says what the host's network should look like. It parses
// intent files strictly, validates them as a whole, merges several files
// into one intended state, and publishes the format as a JSON Schema.
//
// # The flow
//
//	file a.json ──Parse──┐
//	file b.json ──Parse──┼──Merge──▶ merged Intent ──Validate──▶ renderer
//	file c.json ──Parse──┘   (conflicts        (every problem,
//	                          on both files)    with file and path)
//
// Parse checks one document's shape; Merge combines files and reports
// objects that two files both define; Validate checks the meaning of the
// whole, including references between files. Each step reports every
// problem it finds at once, as an errors.Join of *FieldError values, each
// naming the file (after Merge) and the JSON path of the offending value:
//
//	b.json: interfaces[2].vlan.id: 5000 is out of range 1-4094
//
// List them with FieldErrors. Nothing in this package touches the kernel or
// runs a program. Each section of the format has its file and its line in
// one table (sections.go), which Validate, Merge and WithoutConflicts go
// through in the order of the schema.
//
// # The format, version 1
//
// Drift policy: "drift" is "repair" (the default), "report" or "ignore"
// (DriftPolicy, drift.go), at the top of a file (the default of its
// objects) and on any interface (with its addresses, port and VLANs),
// route, rule, neighbour or chain; a sysctl takes its file's. An object's
// own value wins over its file's, and an object takes the policy of the
// file that defines it. It is what the daemon does when someone changes
// or deletes the object in the kernel after netagent created it: repair
// puts it back; report leaves it, lists it (attribute, intended, running)
// in `netagent status` and `netagent check` (exit 1), and counts it in the
// metrics as found, not repaired; ignore leaves it and says nothing
// (check notes its changed attributes without failing). Every object is
// created whatever its policy: when the intent adds it, at the daemon's
// start, and by `netagent apply`; an explicit apply, and a daemon start,
// converge everything: they are the operator's order to apply the
// intent. The daemon does not create again a report or ignore object
// deleted by hand (report lists it as gone). Not a kernel attribute:
// changing a policy writes nothing (render.DriftOf passes it beside the
// graph).
//
// The top level is an object with "version" (must be 1), the optional
// "drift", the optional lists "interfaces", "routes", "rules",
// "neighbors", the map "sysctls", the object "firewall" with "chains", the
// object "nftables" with "tables" and the object "dns". Field names are camelCase and exact;
// unknown fields, fields given twice, null values and data after the object
// are errors. Schema returns the full JSON Schema; the types in types.go
// carry the same names in their json tags. In short:
//
//   - interfaces: name (1-15 bytes of printable ASCII, no '/', ':' or
//     space), type, mtu, state (up, the default, or down), mac (virtual
//     types only), alias (at most 246 bytes; "netagent" and
//     "netagent:..." are reserved for netagent's ownership mark), master
//     (an interface of a type that takes ports: a bond, a bridge, ...; its
//     section's doc says so), addresses (CIDR, like
//     "192.0.2.10/24"; an address once per intent, but for a host
//     address, /32 or /128, which several interfaces may share as
//     unnumbered links do), protected (true: no apply disrupts the
//     interface without --force, and removed from the intent it stays in
//     the kernel as an orphan; see the README's "Protected links"), and
//     the section named like the type, if the
//     type has one, and no other. The types are physical (an existing NIC,
//     found by its name or by its "match": match.go) and those of the table linkSections (link_kinds.go; the README lists
//     them). Each type's section (whether it is required, its defaults
//     and its rules) is documented on its struct, in the type's file
//     link_<type>.go: the struct is the type of the section's field of
//     Interface (go doc intent.Interface), so `go doc intent.Bond` shows
//     the "bond" section, `go doc intent.Tunnel` the "gre", "ipip" and
//     "sit" ones; a dummy has no section. An interface whose section
//     names a parent cannot have a greater mtu than its parent (less the
//     header its type adds), when the intent gives both.
//     A bridge port may have "bridgePort" (see BridgePort, bridgeport.go):
//     cost (1-65535) and priority (0-63), absent: the kernel's; and
//     "vlans", the port's whole VLAN membership, entries of vid (1-4094)
//     or vids ("20-30"), pvid (one per member, a single vid) and untagged,
//     no VLAN twice. A bridge's own "vlans" (bridge.vlans) are the same.
//     VLANs need the bridge's vlanFiltering (without it the kernel
//     forwards every VLAN everywhere); absent, a member has the kernel's
//     default (VLAN 1, pvid, untagged), and [] is no VLAN. bridgePort is
//     only for an interface whose master is a bridge.
//     "ethtool" (see Ethtool, ethtool.go): features by the kernel's
//     names or the ethtool CLI's aliases (items.ExpandFeature), channels,
//     rings, coalesce, pause, link (speed, duplex, autoneg, and advertise:
//     kernel link mode names, not with autoneg false) and wakeOnLan, each
//     bounded; only what is named is set. What the driver reports fixed,
//     above its maximum or not supported (a link mode) is refused at plan
//     and apply, not here.
//     "dhcp4" (see DHCP4, dhcp4.go): true, false (none) or the options
//     hostname, clientId, useRoutes and useDNS (default true),
//     routeMetric (distinct per interface using its lease's routes) and
//     vendorClass; not on a bond or bridge port, nor an interface declared
//     down. (The agent does not acquire leases yet: render refuses it.)
//     "ipv6" (see IPv6, ipv6.go): acceptRA (the kernel's SLAAC from
//     router advertisements, rendered as the interface's accept_ra,
//     autoconf and disable_ipv6 sysctls, which the sysctls section may
//     then not set), acceptRADefRoute and acceptRAPrefixes (default true;
//     need acceptRA), and dhcp6 (a DHCPv6 client for an address and DNS
//     servers); not on a bond or bridge port, nor an interface declared
//     down, nor with net.ipv6.conf.all.disable_ipv6 set.
//   - routes: to ("default" or a CIDR prefix without host bits), via, dev,
//     table (absent: main), metric, scope, src, type (unicast, the default;
//     blackhole, unreachable and prohibit take no via or dev) and family.
//     The family comes from to, via and src, which must agree; family is
//     needed only for a default route with neither via nor src that is IPv6.
//     A route cannot go over an interface declared "state": "down" (its dev,
//     or the only interfaces whose subnets hold its via): the kernel keeps
//     no route over a link that is down. Nor can it be the prefix route the
//     kernel adds itself for an address of the intent (table main, metric 0
//     for IPv4, 256 for IPv6): give it another metric or table. onlink needs
//     via and dev; mtu is 68 (IPv6: 1280) to 65535; pref (low, medium,
//     high) is for IPv6 routes only. nexthops makes a multipath (ECMP)
//     route, one route of its table, destination and metric: two or more
//     nexthops, each with via, dev or both (IPv6: via), weight 1-256
//     (absent: 1) and onlink, no two alike; it excludes the route's own
//     via, dev and onlink.
//   - rules: priority (required, 1 or more), not, from, to, fwmark, fwmask,
//     iif, oif, ipproto (a name or number), sport and dport ("80",
//     "1000-2000"; not for a protocol without ports), uidrange
//     ("1000-1999"), suppressPrefixlength, action (lookup, the default;
//     goto, blackhole, unreachable, prohibit), table (required for lookup,
//     refused otherwise), goto (required for goto: the priority of a later
//     rule of the intent of the same family) and family (required when
//     neither from nor to is given). iif and oif may name interfaces the
//     agent does not manage. A from or to of length 0 ("::/0") is the same
//     as none, as in the kernel. Two rules of one priority may not have the
//     same selectors.
//   - neighbors: dev, ip and mac, all required.
//   - sysctls: keys in dot form under "net." ("net.ipv4.ip_forward"), each
//     part letters, digits, '_' and '-'; values are strings. Two names of
//     one kernel value (net.ipv4.ip_forward and net.ipv4.conf.all.forwarding)
//     may not both be set, also from two files: each is reported, naming
//     the other. An interface whose IPv6 they disable (its own
//     disable_ipv6, else "all", else "default" for a link netagent creates)
//     cannot have IPv6 addresses, routes or neighbours.
//   - dns (see DNS, section_dns.go): nameservers (IP addresses, at most 3;
//     an IPv6 link-local one with a zone) and search (domain names, at
//     most 6 and 256 characters in all), no duplicates; only one file may
//     have the section.
//   - firewall.chains: table (filter, nat, mangle, raw), name (a user chain,
//     at most 28 bytes), jumpFrom (a built-in chain of that table; absent:
//     no jump), position (of the jump, 1-based; absent: 1), family (ipv4,
//     the default; ipv6; both) and rules, each as it would follow
//     "-A <name>". Rules may name foreign interfaces. netagent's jumps from
//     one built-in chain (per family and table) are one block: ordered by
//     position, an explicit position before an absent one, then by name,
//     the block starting at the first position (or right after the
//     chain's own rules, if fewer). Two chains on one hook may not give the
//     same explicit position. A comment starting with "netagent" is
//     reserved for netagent's own chain mark.
//     A rule must fit every family of its chain: no address of another
//     family (-s, -d, --to-source, --to-destination; none at all in a
//     "both" chain), and no jump to a chain of the intent that lacks one of
//     its families. NAT targets (DNAT, SNAT, MASQUERADE, REDIRECT, NETMAP)
//     belong in table nat, CT and NOTRACK in raw, and a chain jumped to from
//     a built-in chain holds only the NAT targets the kernel allows from
//     there (MASQUERADE from POSTROUTING, DNAT from PREROUTING or OUTPUT,
//     ...).
//   - nftables.tables (see NftablesTable, nftables.go; the model is
//     items.NftTable): netagent's own nftables tables, written over
//     netlink, each wholly netagent's (a table of the same family and name
//     that netagent did not make is a clash, left alone). A table has family
//     (inet, ip, ip6, bridge, netdev), name (a letter or '_', then up to 63
//     letters, digits, '_', '.', '-'; chains and sets likewise, the chain
//     name netagent-owned reserved for netagent's mark), chains and sets.
//     A base chain has type (filter; nat and route only in inet, ip, ip6),
//     hook (prerouting, input, forward, output, postrouting; ingress in
//     inet and netdev, egress in netdev; nat on prerouting, input, output,
//     postrouting; route on output), priority (a number or nft's name:
//     raw -300, mangle -150, dstnat -100, filter 0, security 50, srcnat
//     100; bridge dstnat -300, filter -200, out 100, srcnat 300; dstnat
//     only on prerouting and output, srcnat on postrouting and input; a nat
//     chain above -200), policy (accept, the default; drop) and device
//     (required on ingress and egress, only there). A chain without hook
//     is a regular chain. Rules match iifname, oifname, saddr and daddr (an
//     address, a prefix without host bits, or "@set" of addresses; of the
//     table's family in ip and ip6), protocol (tcp, udp, icmp, icmpv6, sctp,
//     0-255), sport and dport (a port, "lo-hi" or "@set" of inet_service;
//     protocol tcp or udp), ctState (any of invalid, established, related,
//     new, untracked) and mark; then counter, one of masquerade, snat and
//     dnat (address, address:port, [ipv6]:port; a port needs tcp or udp),
//     and verdict (accept, drop, return, jump, goto, with target: a regular
//     chain of the table, no loops). The kernel's refusals are Validate's:
//     a nat statement runs only from a nat base chain, also through jumps,
//     on a hook that allows it (masquerade postrouting, snat postrouting
//     and input, dnat prerouting and output). Sets have type (ipv4_addr,
//     ipv6_addr, inet_service), interval (prefixes and ranges a-b allowed)
//     and elements, each once.
//     Ownership: netagent writes the empty chain netagent-owned into every
//     table it makes, and records the table (family, name, when) in the
//     state directory's nftables.json before the batch that creates it,
//     forgetting it after the one that deletes it. A table of an intended
//     family and name without the mark is a clash that plan predicts and
//     apply refuses before any write; one the record names (someone
//     deleted netagent's table, or its mark chain, and made their own) is
//     reported as having lost its mark and left alone, neither adopted nor
//     deleted: delete it, and apply makes netagent's again. show --all
//     lists other owners' tables as foreign. plan warns ("~ warning:";
//     "warnings" in plan --json) of each other owner's base chain on the
//     hook of one of netagent's, in a family that sees its packets (inet
//     covers ip and ip6), with policy drop or rules that drop or reject,
//     naming it, its priority and whether it runs before or after
//     netagent's: an accept in netagent's table does not bypass it
//     (KEP-3866); at most 10000 of their rules are inspected in all, and a
//     warning counts the chains left out. A base chain's hook, priority
//     and type cannot change in place: plan's traffic line of the modify
//     names each chain it recreates.
//
// A field left out takes the default named above; the Effective* methods
// return it. Where 0 is outside a number's documented range (an mtu, a
// route's table, a vxlan port, a chain's position), a 0 is the same as
// leaving the field out, since the Go types cannot tell them apart: the agent
// accepts it, the schema does not.
//
// # Identities
//
// Two objects are the same object, which is a duplicate within one intent
// and a conflict across files, when they share: an interface name (veth peer
// names included); a route's family, table, destination and metric (an IPv6
// route's metric 0 being 1024); a rule's family, priority and selectors
// (from, to, fwmark/fwmask, iif, oif: not its table); a neighbor's dev and
// ip; a sysctl key; a chain's family, table and name (a "both" chain is one
// chain in each family); an nftables table's family and name.
//
// # Firewall rules
//
// No shell ever sees intent text. SplitRule splits each rule into arguments
// with shell-like quoting (spaces, single and double quotes, backslashes; no
// expansion) and rejects unbalanced quotes and control characters. Validate
// stores the result in Chain.Args and rejects rules that pick the table or
// a command themselves ("-t", "-A", "--append" and the like), since the
// agent chooses those. The renderer passes Args as an argument vector, or
// quotes each one when writing iptables-restore input.
//
// # The caller's duties
//
//   - Parse every file, Merge them (even a single one, so that errors name
//     it), then Validate the merged intent; render it only if Validate
//     returned nil. Merge alone does not validate.
//   - Keep the running configuration when any step fails: the errors are
//     meant for the operator, and the merged intent of a failed Merge is
//     only good for reporting.
//   - A caller that must go on with the files despite a conflict (the
//     daemon, which reports it on both files) takes WithoutConflicts
//     first: the files with every conflicting object left out of all of
//     them, so that neither version is applied and the rest of each is.
//   - Treat a validated Intent as read-only. Validate fills the derived
//     fields (Chain.Args) and the merged intent shares slices with the
//     parsed files.
//   - Physical interfaces are never created: they must exist, and the agent
//     only configures them. Everything else named by the intent is the
//     agent's; names reached only through iif, oif or firewall rules are not.
//
// # Adding an interface type
//
// In this package, a type is its file, link_<type>.go (its LinkType
// constant, the section's struct with its format documentation, enums,
// defaults, checks with JSON paths, and its linkSection), one line in
// linkSections (link_kinds.go; the list of valid types, linkTypes, follows
// from it), the section field of Interface (types.go) and schema.json,
// which stays the contract (the schema tests compare it with the types).
// The whole checklist, across the layers:
//
//   - agent/intent: link_<type>.go (the LinkType constant; the section
//     struct, whose doc comment is the format's reference for the
//     section, its enums, defaults and checks with JSON paths; and a
//     linkSection), one line in linkSections (link_kinds.go), the section
//     field of Interface (types.go) and schema.json (the contract: the
//     schema tests compare it with the types);
//   - agent/render: link_<type>.go (a linkKind: section to attributes and
//     back) and one line in linkKinds (link_kinds.go);
//   - items: kind_<kind>.go (the InterfaceKind constant and the KindAttrs:
//     Equal, NeedsRecreate with the defaults, Dependencies, ConflictKeys,
//     Problem, String) and one line in kinds (kinds.go);
//   - configurators/link: kind_<kind>.go (a linkKind: newLink, observe,
//     and converge, mask and afterCreate where the kind needs them, from
//     plainKind otherwise) and one line in linkKinds (kinds.go);
//   - the README's line for the type;
//   - tests: the fake's build case and a kindCase in
//     configurators/link/fake_kinds_test.go, and a real-kernel test in
//     test/netns (link_<kind>_test.go), or in the VM
//     (link_<kind>_vm_test.go, -tags vmtest) when the host kernel lacks
//     the module, which then needs its line in vm.DefaultModules
//     (test/vm/modules.go) if it has none.
//
// Outside tests that is 4 new files (link_<type>.go twice, kind_<kind>.go
// twice) and 7 shared ones: a line in each of the four tables, the field
// in types.go, the type and its section in schema.json, and the README; 8
// with a module for the VM.
// A type without a section (dummy) has no section field, schema section,
// render file or attributes: its files hold only its constants, its
// linkSection and its linkKind. No package doc lists the kinds: the tables
// do, and the README.
//
// # Adding an intent section
//
// A section is a top-level member of the format ("routes", "sysctls",
// "firewall.chains", ...). In this package a section is one file,
// section_<name>.go, holding the type of its objects and the Effective*
// methods of its defaults, its checks (checker methods reporting every
// problem with its JSON path: c.fail, and duplicates by identity with
// c.unique), its identity (the readable key that makes two objects the
// same, for Validate and Merge alike) and its entry: a section value,
// made with listSection for a list (the JSON path, where the list is in
// an Intent, an object's origin, its identities, its check). The table
// sections (sections.go) lists the entries in the order of the schema;
// Validate checks, and Merge and WithoutConflicts combine, the sections in
// that order, so a section's errors come there. A check that relates the
// section to the objects of other sections is its crossCheck, run after
// every section's check (the sysctls disabling IPv6 under addresses,
// routes and neighbours). The interfaces section points at
// validate_links.go and the interface types (above). The whole
// checklist, across the layers:
//
//   - agent/intent: section_<name>.go, one line in sections
//     (sections.go), the member of Intent (types.go), its enumerated
//     types and their value lists (enums.go), schema.json (the schema
//     tests compare it with the types), and its description and identity
//     in this documentation;
//   - agent/render: section_<name>.go (a section: render its objects into
//     items; toIntent, the items back, leaving out the defaults; refs, the
//     interface names its items name) and one line in sections
//     (sections.go); its line in the package's intent-to-items table;
//   - items: the item type of its objects (go doc ./items);
//   - configurators: the configurator that applies the items and reads
//     them back, registered in configurators.NewRegistry and
//     configurators.ReadBack;
//   - its description in the README's section on the intent.
//
// TestSectionsCoverTheFormat, in both packages, fails until both tables
// have an entry for each member of Intent.
package intent
