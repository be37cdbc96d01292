// Package configurators puts the configurator packages together for one
// target network namespace: NewRegistry registers every item type's
// configurator, and ReadBack builds a current-state graph from the
// kernel, as a restarted agent (or `netagent show`) needs it (ReadItems
// returns the items, for a caller that builds the graph itself).
//
//	package        item types                          read back
//	-------        ----------                          ---------
//	link           interface, port                     link (external), interface, port (create journal
//	                                                   and NIC originals under stateDir)
//	l3             address, route, rule, neighbor      the owned ones (rtnetlink protocol 211, ...)
//	firewall       iptables-chain, sysctl              the owned ones (state under stateDir)
//	dns            dns (resolv.conf, systemd-resolved) the agent's resolv.conf, for the hint's dns item
//	dhcp6          dhcp6-lease                         the hint's leases kept unexpired under stateDir
//	statefile      —                                   (the state directory's files, shared)
//
// Item types whose programs are missing (iptables) still register: their
// items fail one by one, each naming the program missing.
//
// Each package marks what it creates in the kernel and reads back only its
// own objects (plus, for links, the external link items that physical
// interfaces and carrier-dependent routes need, and, for l3, the others'
// routes and rules as items.Foreign); see each package's doc. ReadForeign
// reads the rest of the others' objects for `show --all`: addresses and
// permanent neighbours (l3.ReadForeignAddrNeigh) and iptables chains
// (firewall.ReadForeignChains). ReadOthers reads the others' objects for
// `import kernel`, each as the item that would make it or as an
// items.Foreign saying why none can (link.ReadOthers, l3.ReadOthers,
// firewall.ReadChangedSysctls against a fresh namespace's defaults,
// firewall.ReadOtherChains). Nothing else reads them.
//
// Two more things serve a plan (`netagent plan`), which must say what an
// apply would do without doing it:
//
//   - Clashes: the intended items whose place in the kernel an object
//     netagent does not own already holds (each package's Clashes, next to
//     its read-back, with the configurator's own key and error): their
//     create fails.
//   - SideEffects: what the kernel undoes by itself when an operation runs
//     (a global forwarding key rewrites the interfaces' keys; a link set
//     down or given a new MAC loses its neighbours; ...): apply writes it
//     again in a follow-up pass.
//   - Predict: what each operation does to traffic (package disrupt: in
//     place, replaced atomically, a port detached, withdrawn for the
//     duration, a link flap, set down, recreated, removed), asked of the
//     package that runs it (link.Predict follows converge's steps and each
//     kind's own, link.PredictPort, l3.Predict, firewall.Predict).
//
// Fake (fake.go) is a namespace in memory for tests without root: the
// link, l3 and firewall packages' own fakes, with NewRegistry, ReadItems,
// Clashes and NewDryRun over them (agent/host's OpenFake runs a Runtime
// over it).
package configurators
