// Package items defines netagent's Linux item types: the kernel objects the
// agent manages (or observes), as depgraph items with their dependencies.
// It is pure data. Nothing here talks to the kernel: the configurators turn
// these items into netlink and iptables calls, and read the kernel back into
// them; the renderer builds them from a validated intent.
//
// # The model
//
// One item is one kernel object, named the way the kernel identifies it, so
// that an item's name says which object it is and a change of identity is a
// different item (a delete and a create), never a modification:
//
//   - A Link is an interface netagent did not create and never changes (a
//     NIC). It is external: the agent puts it into the current state from
//     netlink events, with its carrier.
//   - An Interface is every interface the intent declares, of any kind,
//     physical included, so that dependants can always refer to
//     "interface/<ifname>". For a physical interface the item is the
//     settings netagent applies; deleting it never deletes the NIC.
//   - A Port is the membership of an interface in a bond or a bridge (not a
//     field of Interface, so that moving a port touches neither interface),
//     with a bridge port's STP cost and priority.
//   - A BridgeVLANs is the whole VLAN membership of a bridge port, or of a
//     bridge itself (its name is the bridge's); without one a member has
//     the kernel's default (DefaultVLANs).
//   - Address, Route, Rule, Neighbor, IptablesChain (a user chain with all
//     its rules and its jump) and Sysctl (a net.* parameter) are one object
//     each; a multipath route, all its nexthops, is one Route.
//   - A Foreign is external: a route or rule netagent does not own or cannot
//     describe, read back so that show and check see it; never intended.
//
// Every type implements depgraph.Item on a pointer receiver: put *Route,
// not Route, into a graph, and type-assert item.(*items.Route) in a
// configurator. Items are values: never change an item after it has been
// put into a graph; build a new one.
//
// # Dependencies
//
// An item depends only on what the kernel needs to exist first: the parent
// of a VLAN, macvlan or VXLAN; the master and the interface of a port; the
// device of an address, a route or a neighbour; the Link of a physical
// interface; the address that puts a route's gateway on-link. The one
// dependency on state rather than existence is a route's dependency on its
// uplink's carrier (HasCarrier, "carrier up"): a route out of a physical
// uplink is withdrawn while the cable is out and comes back with the
// carrier, so that traffic fails over to another route. An interface's own
// settings never depend on carrier: they are never withdrawn. A DHCP
// lease on a physical interface waits for its carrier too; one on an
// interface netagent creates (a bridge) has no Link to wait for, and its
// client asks until an answer comes.
//
// Where a dependency needs knowledge of the whole intent, the renderer fills
// a field that exists only to shape the dependencies: Route.CarrierLink,
// DHCP4Lease.CarrierLink, DHCP6Lease.CarrierLink, Route.GwAddress and the Deps lists of Route, Rule, Neighbor, Sysctl,
// Address and IptablesChain. These
// fields take part in Equal, so a change of them is a Modify whose kernel
// part is a no-op; configurators must accept that.
//
// # Names, recreate, and zero values
//
// Attributes the kernel cannot change in place are either part of the name
// (a route's table, destination and metric; every selector of a rule; an
// address and its prefix length) or reported by NeedsRecreate (some
// interface attributes, an address's label and scope). NeedsRecreate answers
// true only where the kernel refuses, or silently ignores, an in-place
// change, because a recreate first deletes everything that depends on the
// item. NeedsRecreate(old, new) covers every type, so configurators can
// delegate to it.
//
// Where two spellings name the same kernel object, the name and Equal treat
// them alike: route table 0 is main (254); an IPv6 route's metric 0 is 1024;
// a rule's fwmark mask 0 with a non-zero mark is 0xffffffff; a chain's jump
// position 0 is 1; sysctl values compare field by field. Other zero values
// mean "the kernel's default" or "leave as is" (MTU 0, bond mode "").
//
// Each type has a Validate method that rejects what the kernel would refuse
// or silently change; every error wraps ErrInvalid.
//
// # Types
//
//	type            name                               depends on                               NeedsRecreate when
//	----            ----                               ----------                               ------------------
//	link (external) <ifname>                           nothing                                  never changed by netagent
//	interface       <ifname>                           physical: link/<ifname> (present);       kind changes, or the kind's
//	                                                   another kind: what its attributes'       attributes say so (NeedsRecreate,
//	                                                   Dependencies name (interface/<parent>    in kind_<kind>.go: a bond's Mode,
//	                                                   of a vlan, ...), in kind_<kind>.go       a VLAN's Parent, ID, Protocol, ...)
//	port            <ifname>                           interface/<master>, interface/<ifname>   never (a new master is re-enslaved)
//	bridge-vlans    <ifname> (a port, or the bridge)   port/<ifname> while its master is the    never (the set is converged in place)
//	                                                   bridge; the bridge's own: interface/<br>
//	address         <dev>/<addr>/<len>                 interface/<dev>; Deps (a vrf port's      Label or Scope changes
//	                                                   port/<dev>, recreating on its Modify)
//	route           <table> <dst> metric <metric>      interface/<dev> if Dev set, and each     never (NLM_F_REPLACE changes gw, dev,
//	                (e.g. "main 0.0.0.0/0 metric 100") nexthop's; link/<CarrierLink>            src, scope, type, onlink, nexthops,
//	                                                   (carrier up); address/<GwAddress>; Deps  mtu and pref in place)
//	rule            <family> <prio>: <selectors>       Deps (a goto: the rules it jumps to)     never (every selector and the action
//	                lookup <table> | goto <prio> | ...                                                   are in the name)
//	neighbor        <dev>/<ip>                         interface/<dev>; Deps (a vrf port's      never (a new MAC is replaced in place)
//	                                                   port/<dev>, recreating on its Modify)
//	iptables-chain  <family>/<table>/<chain>           Deps                                     never (rules are replaced as a whole)
//	sysctl          <key>                              interface/<if> for a per-interface key   never
//	                                                   (see SysctlInterface)
//
// InterfaceNeedsRecreate and AddressNeedsRecreate give the kernel's reasons.
//
// # Kernel keys and make before break
//
// The reconciler adds a new object before it deletes the one it replaces,
// unless the kernel cannot hold both (their depgraph conflict keys are
// equal); only then is the old one deleted first. Each kind's kernel key:
//
//	interface  the interface name: the item name (a changed kind is a
//	           recreate); ConflictKeys "link <name>", a veth's peer name
//	           too, a VLAN's parent, protocol and ID, a VXLAN's VNI, port
//	           and family, so a renamed VLAN or VXLAN, or an interface
//	           taking a veth peer's name, comes after the old one goes
//	port       the port's name: the item name (a new master is re-enslaved)
//	bridge-vlans  the member's name: the item name
//	address    IPv4: interface, address and prefix length: the item name, so
//	           192.0.2.11/24 is added before 192.0.2.10/24 goes;
//	           IPv6: interface and address only: ConflictKeys
//	           "address <dev> <addr>", so 2001:db8::1/64 goes before
//	           2001:db8::1/56 is added
//	route      table, family, destination, tos (always 0) and metric: the
//	           item name, so a route with another metric is added before the
//	           old one goes, and a new gateway, device, source, scope, type,
//	           nexthop set, weight, onlink, mtu or pref is a Modify
//	           (NLM_F_REPLACE), never a delete
//	rule       every selector, priority, table and action: the item name, so
//	           a changed rule is added before the old one goes
//	neighbor   interface and IP: the item name (a new MAC is replaced)
//	chain      family, table and chain name: the item name
//	sysctl     the key: the item name
//
// # Ownership
//
// The route and rule configurators mark everything they create with the
// rtnetlink protocol RouteProtocol (211, "netagent") and, reading the kernel
// back, take as their own only what carries it. How interfaces and iptables
// chains are marked as netagent's is the configurators' business.
//
// # Example: a gateway
//
// An uplink NIC with an address and a default route, and a LAN bridge over
// two NICs. An arrow A ──▶ B reads "A depends on B": B is created first and
// deleted last.
//
//	route/main 0.0.0.0/0 metric 100 ──(carrier up)──────────────▶ link/uplink0 (external)
//	   │                      │                                        ▲
//	   │ (gateway on-link)    │ (device)                               │ (present)
//	   ▼                      ▼                                        │
//	address/uplink0/   ──▶ interface/uplink0 ──────────────────────────┘
//	  203.0.113.2/24          ▲
//	                          │
//	sysctl/net.ipv4.conf.uplink0.rp_filter
//
//	address/br0/192.168.1.1/24 ──▶ interface/br0 (bridge)
//	                                 ▲         ▲
//	                        (master) │         │ (master)
//	               port/lan0 ────────┘         └──────── port/lan1
//	                  │ (port)                              │ (port)
//	                  ▼                                     ▼
//	           interface/lan0                        interface/lan1
//	                  │ (present)                           │ (present)
//	                  ▼                                     ▼
//	           link/lan0 (external)                  link/lan1 (external)
//
//	sysctl/net.ipv4.ip_forward, iptables-chain/ipv4/nat/NAT-OUT: no dependencies
//
// When uplink0 loses carrier, only the default route is withdrawn; the
// address, the interface settings and the LAN side stay. When the NIC lan0
// disappears, interface/lan0 and port/lan0 go with it and come back with it.
//
// # Adding an interface kind
//
// In this package, a kind is its file, kind_<kind>.go (its InterfaceKind
// constant and, if it has attributes, its KindAttrs type), and one line in
// the kinds table (kinds.go: whether its attributes are required, whether
// the interface exists already rather than being created, whether it
// takes ports); Interface itself does not change. The whole checklist,
// across the layers:
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
package items
