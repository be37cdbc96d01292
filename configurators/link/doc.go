// Package link configures network interfaces: items of type "interface"
// (every kind of the linkKinds table, kinds.go, each in its file
// kind_<kind>.go, and the settings of physical NICs), "port" (membership
// in a bond, bridge or vrf, a bridge port's STP cost and priority) and
// "bridge-vlans" (a bridge port's, or a bridge's own, VLAN membership),
// and reads the kernel's links back into items, the external "link" items
// included.
//
// # Model
//
// Everything goes through the Target's one netlink handle, behind the
// narrow nlOps interface. The few requests netlink.Handle cannot make
// (bridge STP and forward delay, in-place bond and VXLAN option changes,
// a bridge port's cost, and reading those back) are raw rtnetlink messages
// on a socket opened inside the target namespace (rawOps): kept open by the
// configurators, one per request for a read-back, which reads every link's
// raw attributes with one dump.
// The only requests that leave the target namespace, for a veth whose
// peer is in another named namespace (opening it for the create, its
// nsid, the peer's name), are behind nsOps. A WireGuard device's
// configuration (keys, port, fwmark, peers) is generic netlink, through a
// wgctrl client opened inside the target namespace for each call (wgOps; see
// kind_wireguard.go); its key files are read when it is configured and read
// back, and never kept in an item, a log or an error.
//
// The configurators compare against the kernel, not against the old item:
// Create, Modify and the port operations read the link, describe it as an
// item (observe), and write only the attributes that differ from the wanted
// item (converge). So applying the same intent twice writes nothing, and a
// Modify after drift repairs what drifted.
//
// # Ownership
//
// A link netagent creates carries the IFLA_IFALIAS "netagent", or
// "netagent:<alias>" when the intent gives it an alias; read-back strips the
// mark. The alias lives in the kernel, so a restarted agent with no memory
// knows its links, and `ip link` shows it to an operator. The kernel ignores
// IFLA_IFALIAS in a create request (checked on Linux 6.18), so the mark is
// a second request right after the create (the new link is read once
// first; when its admin state is all that else differs from the intent,
// as for a link made with its kind's settings, the mark and the admin
// state are one request; otherwise the mark, then the settings as for
// any owned link, up last). Before the create, the link is
// recorded in the create journal (<stateDir>/links.json, written before the
// create, the entry cleared once the mark is set; the creates of one wave,
// handed over as a batch, share one write before their adds and one after
// their marks, and a large batch lists the links once instead of looking
// each name up: see dumped); if the mark fails the link is deleted again. A crash in between leaves an unmarked link that
// the journal names: the next run adopts exactly that link (the journal's
// name and kind, and a veth's peer): Create marks and converges it when the
// intent still holds it, read-back reports it as owned so that it is
// deleted when the intent does not. An entry whose link does not exist, or
// has another kind (the agent was stopped before the add), is stale: the
// next create drops it, so that it never makes a link someone else makes
// later netagent's. The record is replaced by a rename and not synced: it
// is about this boot only (see stateStore). An entry whose link carries
// the mark (a kill between the mark and the clearing write) is dropped by
// the next create, as a stale one is.
//
//   - A link of the wanted name that is not netagent's (no mark, no
//     journal entry of its name and kind) is someone else's: Create and
//     Delete fail with ErrNotOwned and leave it alone.
//   - A marked link of the wrong identity (another kind, VLAN id, ...) is a
//     leftover of netagent's own, and Create replaces it.
//   - A veth peer created in the same namespace is marked too, so that the
//     intent may declare either end or both. A peer created in another
//     namespace is left unmarked: there it plays a physical link (an
//     external link item of that namespace), as a NIC handed to a container
//     does. Deleting either end deletes the pair.
//   - Ports: netagent enslaves only into masters it owns, and takes a port
//     away only from a master it owns (ErrNotOwned otherwise).
//
// # Physical interfaces
//
// Physical interfaces are never created, marked or deleted, whatever their
// alias: Create applies the settings to an existing link (ErrMissing if
// there is none) and refuses an alias that carries the mark
// (ErrReservedAlias: the intent cannot forge ownership). A link the hint
// declares physical, or whose originals are recorded, is never taken for
// netagent's, even if it carries the mark (a NIC found with the mark stays
// recorded, without settings, for that reason).
//
// Before netagent first changes a setting of a NIC (MTU, admin state,
// alias, MAC), it records the value found in <stateDir>/links.json (per
// namespace instance and NIC ifindex, written before the change; the first
// value recorded stays the original, so a restart never takes netagent's
// own value for it). Delete (the NIC left the intent) writes the originals
// back and forgets them; a setting the intent no longer sets is given back
// by Modify in the same way. Read-back reports a physical Interface for
// every NIC with recorded originals, so that a one-shot apply that no longer
// declares it deletes (restores) it. A NIC's master is a Port: its delete
// releases it (netagent never takes a NIC from a master it does not own).
//
// # Matched NICs
//
// A physical interface with a Match (match.go) finds its NIC among the
// links netagent does not own by what it is: the permanent and current
// MACs (the link dump), the driver (ethtool's drvinfo ioctl on a socket of
// the namespace) and the bus path (udev's ID_PATH, derived from sysfs by
// sysfsPath, only for the agent's own namespace and a sysfs entry of the
// link's ifindex; pathid.go), and a glob on the name the kernel gave it
// (for a NIC netagent renamed, the recorded one). No match is ErrNoMatch,
// two or more ErrAmbiguousMatch naming them, a wanted name another link
// carries ErrNameTaken naming both; nothing is renamed then. The NIC found
// is renamed the interface's name (down, rename, up again if it was up:
// the kernel renames only a down link; the ifindex stays), after its name
// and the match are recorded with its originals (rememberName). Delete
// gives the name back if it is free (restoreName). A NIC in the way that
// another interface of the intent matches (names swapped between boots) is
// moved aside to a temporary name instead, and one that leaves the intent
// too is given back its own name in turn (swap.go). Read-back gives the
// interface of that name the match while the NIC still matches it (the
// recorded match without a hint, for show), so a NIC that no longer
// matches, or one renamed back by hand, is drift a modify repairs. The
// Interface item of a matched NIC depends on no Link (the NIC goes by
// another name until it is renamed): its create fails until the NIC is
// there, and every reconcile (a link event's included) retries it.
//
// # Read-back
//
// ReadBack reports a Link (external) for every link netagent does not own
// (NICs, veth ends playing them, loopback, foreign links of any kind): the
// simplest rule that needs no knowledge of the intent, and it makes every
// foreign link visible to `netagent show`. It reports an Interface for every
// link netagent owns, for a link it does not own that the hint declares
// physical, and for a NIC with recorded originals; a Port for every link
// enslaved to a bond, bridge or vrf netagent owns; and the bridge-vlans items
// described below. With a hint, the fields an intended item leaves unset
// are read back unset (MTU 0, MAC nil, a physical alias ""; each kind's
// mask, in its file, does the same for its attributes: bond options
// 0/"", bridge forward delay 0, the default spellings such as bond mode
// "", ...), so that Equal reports only real differences. An ipvlan's MAC, its parent's, always reads back nil
// (parentMAC). The undeclared end of a veth pair whose other end the hint
// declares is left out (it is part of its peer's item).
//
// # Zero values
//
// The unset values above mean "leave as is": a Modify from MTU 1400 to 0
// changes nothing in the kernel. The bridge's STP and VLAN filtering and
// the VXLAN's Local, Remote and Learning are always applied (false and the
// zero address are values).
//
// # Idempotence
//
// Creating what exists as wanted converges it (usually no write); deleting
// what is gone succeeds; enslaving a port already in place writes nothing;
// releasing a port that is not enslaved to that master succeeds.
//
// # Recreate
//
// NeedsRecreate delegates to items.NeedsRecreate, which for interfaces is
// items.InterfaceNeedsRecreate: a kind change, or what the kind's
// attributes' NeedsRecreate says (items/kind_<kind>.go: a bond's Mode, a
// VLAN's Parent, ID and Protocol, ...).
// Ports never need a recreate (a new master is a release and an enslave).
//
// # Bridge VLANs and port settings
//
// A bridge port's cost and priority are IFLA_BRPORT_COST and
// IFLA_BRPORT_PRIORITY, written in one raw request when they differ and
// left as the kernel holds them when unset (0 and nil). A bridge-vlans item
// (port_vlan.go) is the whole VLAN membership of a port of an owned bridge
// or of the bridge itself (`bridge vlan ... master` / `self`), read with
// one AF_BRIDGE dump (RTEXT_FILTER_BRVLAN) and converged as a diff: one
// RTM_SETLINK with what is missing or has other flags (a pvid moves before
// the old one goes, ranges as RANGE_BEGIN/RANGE_END pairs) and one
// RTM_DELLINK with what is extra. Without an item a member has the
// kernel's default membership (the bridge's default_pvid, 1, as pvid and
// untagged, which every new port gets): read-back reports an item only
// when the hint declares one or the membership differs from that default,
// so that VLANs someone added to netagent's bridge go, and deleting an item
// gives the default back. A kernel built without
// CONFIG_BRIDGE_VLAN_FILTERING reports no VLANs and no default_pvid (its
// default is none) and refuses VLAN writes (EOPNOTSUPP); the real-kernel
// tests of VLANs run in the VM (test/netns, TestInVMBridgeVLANs).
//
// # Testing without root
//
// fake.go (with fake_bridgevlan.go, fake_tunnel.go and fake_wireguard.go)
// holds FakeKernel, an in-memory namespace behind nlOps, rawOps, nsOps
// (other named namespaces for veth peers) and wgOps that answers as the kernel does (ifindexes, EEXIST, ENODEV
// and netlink's "Link not found", veth pairs made and deleted together,
// children deleted with their parent, one master per port, bond ports
// enslaved down, MTU and alias limits, carrier, and only the in-place
// changes the kernel accepts). It logs every write, so a test can assert
// that a second run writes nothing. It is an ordinary file of the package
// (as tailscale's linuxfw/fake.go), not a _test.go file, so that other
// packages' tests (agent/host) can run the real configurators over it
// (FakeKernel.Register, FakeKernel.ReadBack); it lives here rather than in
// a package of its own because it implements rawOps, whose requests are
// the package's own attribute types, and the package's tests use it.
// fakeEnv (fake_kinds_test.go) builds the configurators over it with a state directory in t.TempDir() and
// applies an intent as a restarted agent does; these tests run as any
// user, bonds and VLANs included. The testns tests and test/netns remain
// the reference for the real kernel. To test a new link kind:
//
//  1. teach FakeKernel the kind: a build case for its create request
//     (its parent, defaults and refusals), its attributes in copyOf,
//     linkInfo/setInfoData if it has raw attributes, what deletes it
//     (unregister), and its carrier (lowerUp);
//  2. add a kindCase to kindCases (create, a change in place, a change
//     that needs a recreate, and a check of the fake's state): it is
//     then created, modified, recreated and deleted, each twice, with
//     read-back compared at every step;
//  3. keep a real-kernel test (testns, or the VM for a missing module),
//     so that the fake's rules stay the kernel's.
//
// # Bonds
//
// A bond is created with its mode, then its other options are set; options
// the kernel refuses while the bond is up (EBUSY, such as lacp_rate) are
// applied with the bond set down for a moment. A port is set down before it
// is enslaved, as the kernel requires, and given back its admin state after
// (the kernel opens a new bond port, and closes a released one). A bond's
// Primary names a link that must exist when the bond is configured (the
// kernel takes it by ifindex): otherwise the bond's create fails with
// ErrMissing and is retried by the next reconcile. The kernel reports a
// primary only once it is enslaved, so until then read-back sees none.
//
// # Adding an interface kind
//
// In this package, a kind is a linkKind in kind_<kind>.go (newLink builds
// the create request, observe reads the attributes back; converge, mask
// and afterCreate where the kind has settings that change in place,
// defaults to spell as the item does, or a second object such as a veth's
// peer) and one line in linkKinds (kinds.go), from which kindOf also
// takes the netlink types netagent creates. The whole checklist, across
// the layers:
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
package link
