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
// The format is documented for its users in docs/intent.md, installed as
// netagent.json(5): the concepts, examples and the checks Validate makes
// beyond the schema are written there by hand, and its field reference is
// generated from the descriptions of schema.json (go generate;
// TestIntentDocIsCurrent fails when the page is stale or a property has
// no description, TestSchemaMatchesTypes when a Go field and a schema
// property differ). What a field means is written once, in its schema
// description: the Go types carry the same names in their json tags, and
// their comments say what the code needs. Each interface type's section
// is its struct in link_<type>.go, the type of the section's field of
// Interface (go doc intent.Bond shows the "bond" section, intent.Tunnel
// the "gre", "ipip" and "sit" ones; a dummy has none).
//
// A field left out takes the schema's default; the Effective* methods
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
