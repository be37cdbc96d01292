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
// The top level is an object with "version" (must be 1) and the optional
// lists "interfaces", "routes", "rules", "neighbors", the map "sysctls" and
// the object "firewall" with "chains". Field names are camelCase and exact;
// unknown fields, fields given twice, null values and data after the object
// are errors. Schema returns the full JSON Schema; the types in types.go
// carry the same names in their json tags. In short:
//
//   - interfaces: name (1-15 bytes of printable ASCII, no '/', ':' or
//     space), type (physical, bond, vlan, bridge, veth, macvlan, vxlan,
//     dummy, gre, ipip, sit, ip6tnl, wireguard,
//     ipvlan, vrf), mtu,
//     state (up, the default, or down), mac (virtual types only), alias (at
//     most 246 bytes; "netagent" and "netagent:..." are reserved for
//     netagent's ownership mark), master (a bond, bridge or vrf), addresses
//     (CIDR, like "192.0.2.10/24"; an address once per intent, but for a
//     host address, /32 or /128, which several interfaces may share as
//     unnumbered links do), and exactly the section named like the type: "bond" and "bridge" are
//     optional, "vlan", "veth", "macvlan", "vxlan", "wireguard", "ipvlan",
//     "vrf" and the tunnels' required, and a dummy has none. A wireguard interface has no mac and
//     no master; its privateKeyFile (and a peer's presharedKeyFile) is an
//     absolute path, its peers' publicKeys base64 keys, once per interface,
//     their allowedIPs prefixes without host bits, each on one peer, and
//     their endpoints address:port or [v6]:port (no host names); two
//     wireguard interfaces cannot listen on the same nonzero port. A bond's
//     miimon is in milliseconds; a bridge's forwardDelay is in centiseconds
//     (1500 is 15 seconds), as in ip-link and netlink. A veth's peer is
//     created with it and its name is taken like an interface's, unless the
//     peer goes to peerNetns. A macvlan's parent cannot be a bond or bridge
//     port (the kernel gives a link to one of them), nor can lo be the
//     parent of a VLAN or a macvlan. Two VXLANs cannot share
//     family, VNI, port and parent, nor two VLANs protocol, id and parent.
//     An ipvlan's mode (l2, l3 the default, l3s) and flag (bridge the
//     default, private, vepa) are its parent's: the ipvlans of a parent
//     must agree, and a parent carries macvlans or ipvlans, not both; an
//     ipvlan has its parent's MAC, is no bond or bridge port and carries
//     no VLAN or macvlan.
//     A vrf's table is its own: not 0, 253, 254 or 255, nor another
//     vrf's; a vrf is no port of a bond, bridge or vrf, lo no port of a
//     vrf, nor does a VLAN, macvlan or ipvlan sit on a vrf; a vrf's mtu is
//     1280 or more.
//     A VLAN's, macvlan's or ipvlan's mtu cannot exceed its parent's, a VXLAN's its
//     parent's less 50 (IPv4) or 70 (IPv6), when the intent gives both.
//     A bridge port may have "bridgePort" (see bridgeport.go): cost
//     (1-65535) and priority (0-63), absent: the kernel's; and "vlans", the
//     port's whole VLAN membership, entries of vid (1-4094) or vids
//     ("20-30"), pvid (one per member, a single vid) and untagged, no VLAN
//     twice. A bridge's own "vlans" (bridge.vlans) are the same. VLANs need
//     the bridge's vlanFiltering (without it the kernel forwards every VLAN
//     everywhere); absent, a member has the kernel's default (VLAN 1, pvid,
//     untagged), and [] is no VLAN. bridgePort is only for an interface
//     whose master is a bridge.
//   - tunnels: "gre", "ipip" and "sit" (sections of the same name, all
//     required) have local and remote (IPv4: sit carries IPv6 over IPv4),
//     ttl (0-255; 0, the default, inherits the inner packet's), parent (the
//     link the outer packets are bound to), pmtudisc (default true; false
//     needs ttl 0); a gre also key (both directions), or ikey and okey
//     (1-4294967295). "ip6tnl" has local and remote (IPv6), hopLimit
//     (default 64; 0 inherits), parent, mode (ip6ip6, ipip6 or any, the
//     default) and encapLimit (0-255, default 4). An endpoint left out is
//     "any": without a remote the tunnel sends to a destination chosen
//     per packet and receives from anyone; without a local the kernel
//     picks the source. A tunnel has no mac. The kernel keeps a tunnel's
//     identity unique per type (local, remote, parent and a gre's input
//     key): two such tunnels are refused, naming both, and so is one with
//     neither local, remote, key nor parent, which is the identity of the
//     device the module makes itself. Those devices (gre0, gretap0,
//     erspan0, tunl0, sit0, ip6tnl0, ip6gre0) are the kernel's: no
//     interface of a type netagent creates may take their names (a
//     physical one may, for its settings).
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
// chain in each family).
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
// In this package, a type is its LinkType constant, the section field of
// Interface if it has one, a link_<type>.go with the section's struct,
// enums, defaults, checks (with JSON paths) and its linkSection, one line
// in linkSections (link_kinds.go; linkTypes follows from it), and
// schema.json, which stays the contract (the schema tests compare it with
// the types). The whole checklist, across the layers:
//
//   - agent/intent: link_<type>.go (the section struct, its enums,
//     defaults and checks, and a linkSection), one line in linkSections
//     (link_kinds.go), the LinkType constant (enums.go), the section
//     field of Interface (types.go, none for a type without a section),
//     and schema.json;
//   - agent/render: link_<type>.go (a linkKind: section to attributes and
//     back) and one line in linkKinds (link_kinds.go);
//   - items: kind_<kind>.go (the KindAttrs: Equal, NeedsRecreate with the
//     defaults, Dependencies, ConflictKeys, Problem, String; none for a
//     kind without attributes), one line in kinds (kinds.go) and the
//     InterfaceKind constant (interface.go);
//   - configurators/link: kind_<kind>.go (a linkKind: newLink, observe,
//     and converge, mask and afterCreate where the kind needs them, from
//     plainKind otherwise) and one line in linkKinds (kinds.go); the
//     fake's build case and a kindCase in fake_kinds_test.go;
//   - a real-kernel test in test/netns (link_<kind>_test.go), or in the VM
//     (link_<kind>_vm_test.go, -tags vmtest) when the host kernel lacks
//     the module (add it to vm.DefaultModules if it is not there: see
//     go doc ./test/vm);
//   - a line in the README's list of interface types.
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
