// Package depgraph models state as a dependency graph: items (an interface,
// a route, a firewall chain, a file) and, for each, the items that must
// exist before it can.
//
//	intended state (rendered from intent)          current state (what exists)
//	┌──────────────────────────────────┐           ┌────────────────────────────────┐
//	│ route/default ──▶ interface/eth0 │           │ interface/eth0   [created]     │
//	│      │   "carrier up"     │      │  Reconcile│ address/eth0/…   [created]     │
//	│      ▼                    ▼      │ ────────▶ │ route/default    [failed: …]   │
//	│ address/eth0/… ──▶   link/eth0   │           │ link/eth0        (external)    │
//	│                      (external)  │           │   + per-item StateData         │
//	└──────────────────────────────────┘           └────────────────────────────────┘
//
// # Items and dependencies
//
// An Item is an immutable value with an identity (ItemRef: type and name,
// unique per type), a way to compare two versions of itself (Equal), an
// External flag (observed, never changed by the agent), a description
// (String) and its Dependencies. A Dependency means "the required item must
// exist (be created) first"; it may carry a predicate on the required
// item's current value (MustSatisfy: "the link must have carrier") and may
// ask for the dependant to be recreated when the required item is modified
// (RecreateWhenModified).
//
// An item whose identity in the managed system is wider than its reference
// implements Conflicter: items sharing one of their ConflictKeys cannot
// exist at once (an IPv6 address under two prefix lengths). The reconciler
// creates a new item before it deletes the one it replaces (make before
// break) except for such conflicting pairs, which it deletes first.
//
// # Graphs
//
// A Graph holds items, their dependencies and a reverse index (Dependants),
// so that both directions cost O(degree). Iteration (Refs, Items) is in a
// deterministic order: by type, then name. Items can be organised in named
// subgraphs ("interfaces", "firewall/nat"), which can be edited in place and
// reconciled on their own; ItemAsSubGraph makes a view of a single item.
// In a graph that records the current state, every item carries StateData:
// its state (created, failed, creating, modifying, deleting), last
// operation, last error and when.
//
// Every change of an item's presence or value bumps the graph's revision
// and is recorded in a journal: ChangesSince(rev) returns what changed
// after a revision, which is how the reconciler does work proportional to
// the change instead of to the graph. Putting an item equal to the one
// present is not a change, so re-rendering the same intent into the same
// graph costs no reconcile work. SetState changes state data without
// counting as a change.
//
// Memory: a reference costs a Node of 168 bytes (64-bit), allocated with
// its neighbours in 16 KiB slabs, and a slot in the graph's index (a hash
// table of node pointers and 32-bit hashes, 12 bytes a slot, between 3/8
// and 3/4 full: 16 to 32 bytes a node), on top of the item and its
// dependencies, which the graph shares with the caller, and of the
// required nodes (8 bytes a dependency). A node packs its state data; one
// with an error is kept aside. A graph holds at most 65536 item types.
// Reserve sizes the index once for a known number of items.
//
// DOT renders a graph for Graphviz; DiffDOT renders current and intended
// state together, coloured by what a reconcile would change.
//
// # The caller's duties
//
// A Graph is not safe for concurrent use: one goroutine owns it. Items must
// not be mutated after they are put; put a new value instead.
// Dependencies() must be a pure function of the item's value: it is called
// once per Put and the result is kept.
package depgraph
