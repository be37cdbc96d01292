// Package render turns a validated intent into the intended graph: one
// depgraph item per kernel object (package items), with its dependencies.
// Each section of the intent has its file and its line in one table
// (sections.go), which Render and ToIntent go through.
// It is a pure function of the intent. Nothing here touches the kernel, a
// file or the clock, so it is tested without privileges, and rendering the
// same intent twice gives equal graphs (which costs the reconciler nothing).
//
//	files ──ParseFiles──▶ intents ──RenderFiles──▶ intended graph
//	                                (intent.Merge,      │ one subgraph per file
//	                                 Validate, Render)  ▼
//	                                               reconciler
//	kernel ──read-back──▶ items ──ToIntent──▶ intent (netagent show --json)
//
// # From intent to items
//
//	intent                              items
//	------                              -----
//	interface (any type)                interface/<name> of that kind; a physical
//	                                    one depends on the external link/<name>
//	interface.master                    port/<name> (bond or bridge)
//	interface.bridgePort.cost/priority  port/<name> Cost, Priority
//	interface.bridgePort.vlans,         bridge-vlans/<name> (a port's, or the
//	  bridge.vlans                        bridge's own; canonical ranges)
//	interface.addresses[]               address/<dev>/<addr>/<len>
//	interface.dhcp4                     dhcp4-lease/<name>; with the lease known
//	                                      (Facts): its address and routes,
//	                                      depending on it (lease4.Items), but
//	                                      what would take over the intent's
//	                                      own networks (leaseclaims.go)
//	route                               route/<table> <dst> metric <metric>
//	rule                                rule/<family> <prio>: <selectors> lookup <table>
//	neighbor                            neighbor/<dev>/<ip>
//	interface.ipv6.acceptRA             sysctl/net.ipv6.conf.<name>.{accept_ra,autoconf,
//	                                      accept_ra_pinfo,accept_ra_defrtr,disable_ipv6}
//	interface.ipv6.dhcp6                sysctl/net.ipv6.conf.<name>.disable_ipv6,
//	                                      dhcp6-lease/<name>, and with a lease
//	                                      (Facts) address/<name>/<addr>/128
//	sysctls{}                           sysctl/<key>
//	firewall.chains[] (family "both":   iptables-chain/<family>/<table>/<name>
//	  one item per family)
//	dns + the leases' DNS (Facts)       dns/<resolv.conf path>, only with
//	                                      Facts.ResolvConf (section_dns.go)
//
// What the intent cannot say comes in Facts (RenderWith, RenderFilesWith):
// whether the kernel forwards IPv6 (accept_ra is then 2), the resolv.conf
// path the agent hands DNS to, and the DNS of the leases held.
//
// Defaults are made explicit where the intent's and the kernel's differ
// or where read-back reports the kernel's value: a VXLAN's port (the
// intent's default is IANA's 4789, the kernel's 8472) and learning (on); a
// route's table (main, 254), an IPv6 route's metric (0 is 1024) and a
// route's scope (link for an IPv4 unicast route without a gateway, as `ip
// route add` picks; global otherwise). Units are converted: a bridge's
// forward delay is centiseconds in the intent and a time.Duration in the
// item. Everything the intent leaves out that means "leave as is" (MTU 0,
// no MAC, no bond or bridge section, a bond option of 0 or "") stays unset
// in the item, and read-back reads it back unset.
//
// Fields that only shape dependencies are filled from the whole intent: a
// route out of a physical interface depends on that link's carrier
// (CarrierLink), and on the declared address whose subnet holds its gateway
// (GwAddress: on the route's device, else on a physical interface, else the
// longest prefix, else the first name). A route with a gateway and no
// device is treated as the same route with the device the kernel picks:
// the longest declared subnet holding the gateway, an address's or an
// on-link route's (dev, no gateway; in the route's table first, then
// main), a tie going to an address, then a physical interface, then the
// first name; it depends on that link's carrier if physical, and on that
// address (GwAddress) or on-link route (Deps). When nothing declared holds
// the gateway it has no device dependency: the kernel may reach the gateway
// through foreign objects netagent does not track. A route whose
// preferred source is a declared address depends on that address; a rule
// depends on the declared interfaces it names (iif, oif); a chain depends on
// the intent's chains of its table and family that its rules jump or go to
// ("-j", "-g"). A neighbour on a
// bond or bridge (or on a VLAN over one) depends on the master's declared
// ports, unless the intent sets the device's MAC: enslaving a port changes
// the master's MAC, and the kernel then flushes its neighbours. A sysctl
// whose key names an interface depends on it, and the dots inside a
// declared interface name become slashes
// ("net.ipv4.conf.bond0/100.rp_filter"), as sysctl(8) writes them. The jumps of the chains jumped to from one
// built-in chain (per family and table) are placed as one block: ordered by
// position (absent: 1; an explicit one first at a tie), then by name, the
// block starting at the first position (IptablesChain.BlockStart), each
// jump's Position its place in the block.
//
// Render rejects, with the object's path, what the items cannot express
// although the intent's Validate accepts it: a veth peer used as the device
// of a route or neighbor, or in a sysctl key (the peer has no item of its
// own: its veth creates it), and a sysctl key naming an interface the intent
// does not declare. Rendering those would leave items blocked for ever.
//
// # Files and subgraphs
//
// RenderFiles merges several files (intent.Merge: an object defined by two
// files is reported on both) and puts every item into the subgraph named
// after the file that defines its object (SubgraphName): status can be
// reported, and a file reconciled, on its own. Items that exist because of
// another object (the port and addresses of an interface) go with it.
// Dependencies cross files freely.
//
// RenderRouteEdit is RenderFiles for an edit of one file's routes, for the
// daemon: it renders only the routes added and removed (with the rest of
// the intent, and its on-link routes, as their context) and says what
// changes in the graph, or declines when it cannot tell that apart from a
// full render (anything else changed, an on-link route, a duplicate, an
// error).
//
// # Back from items
//
// ToIntent is the inverse: it turns items, typically read back from the
// kernel, into an intent that Parse and Validate accept, leaving out the
// defaults. Render(ToIntent(Render(x))) renders the same items as x.
//
// # The caller's duties
//
//   - Render (or RenderFiles, or Load) before anything changes: an error
//     means the whole intent is rejected, and the running state must stay.
//   - Treat the intent as read-only afterwards (Validate filled its derived
//     fields) and the graph's items as immutable.
//
// # Adding an interface type
//
// In this package, a type is a link_<type>.go with its linkKind (toItem:
// the validated section to the item's KindAttrs; toIntent: the item's
// attributes back into the section, leaving out the defaults) and one line
// in linkKinds (link_kinds.go). A type without a section needs neither.
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
// In this package a section of the intent ("routes", "sysctls", ...) is
// one file, section_<name>.go, holding its entry in sections
// (sections.go): render, which puts an item for each of its objects into
// the builder (b.put, with the object's origin) and fills the
// dependencies from the whole intent (the index); addToIndex, if the
// other sections need to know something of its objects (the interfaces'
// names and addresses, the on-link routes), which files it in the index
// (index.go) before anything renders; toIntent, which turns
// its items back into the section, leaving out the defaults, in the
// order of the sorted items; and refs, the interface names its items
// name, which ToIntent declares. One line in sections, in the order of
// the schema: Render renders, and ToIntent fills, the sections in that
// order. The interfaces section points at links.go and tointent.go and
// the interface types (above). The whole checklist is in the
// documentation of package intent (Adding an intent section): the
// intent's section file and table line, schema.json, the items type, its
// configurator and the README.
package render
