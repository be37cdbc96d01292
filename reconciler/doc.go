// Package reconciler drives a current-state graph towards an intended one
// (both depgraph graphs), calling a configurator per item type to create,
// modify and delete items in the managed system.
//
//	        intended ──┐
//	                   ▼
//	current ──▶ seed: what changed since the last run (graph journals),
//	   ▲              failed items, operations in flight
//	   │               │
//	   │               ▼
//	   │        ┌─ wave ───────────────────────────────────────────────┐
//	   │        │ 1. mark evictions: recreate, broken dependency → the │
//	   │        │    item and, transitively, its dependants must go    │
//	   │        │    (or modify away first); not intended → retiring   │
//	   │        │ 2. propose what is ready now: delete (no dependants  │◀─┐
//	   │        │    left), modify/create (every dependency created,   │  │ items whose
//	   │        │    settled and satisfying its predicate; a retiring  │  │ neighbours
//	   │        │    item with its conflict key is evicted first)      │  │ changed
//	   │        │ 3. execute: deletes, modifies, creates; one call per │  │
//	   │        │    type for a BatchConfigurator                      │──┘
//	   │        └──────────────────────────────────────────────────────┘
//	   │               │ queue empty
//	   │               ▼
//	   │        4. evict the retiring items (make before break) and run
//	   │           waves again; then withdraw items stalled for good
//	   └──────── results, state data (in the current graph), Records (the caller's)
//
// # The model
//
// Reconcile(ctx, current, intended) diffs the two graphs and runs, in a
// valid order, the operations that make current equal intended for every
// item whose dependencies can be met: a dependant is deleted (or modified
// away) before what it depends on, and created only after everything it
// depends on exists, is created, is not about to change and satisfies the
// dependency's predicate. When a configurator says a change needs a
// recreate (NeedsRecreate), the item is deleted and created again, and
// everything that depends on it, transitively, is deleted first and
// created again afterwards. External items are never touched: their
// appearing, disappearing or changing (the caller puts them into the
// current graph) withdraws or re-creates what depends on them.
//
// # Make before break
//
// An item that is no longer intended is deleted only after the run has
// made every create and modify it could: a new object is in place before
// the one it replaces goes (a route with another metric, a new address),
// and a dependant whose intended value depends on the new item instead of
// the old one moves to it by a modify, before the old one is deleted,
// rather than being deleted with it. Dependants still go before what they
// depend on. Two items the managed system cannot hold at once declare it:
// items sharing a key (depgraph.Conflicter) conflict, and the
// old one is deleted (with what depends on it and cannot move) before the
// new one is created. A recreate is by nature delete first; so is the
// withdrawal of an item whose dependency broke. While a create or modify
// runs in the background, the items no longer intended wait for it. When
// the create or modify of an item failed, the items of its type that are
// no longer intended are held back (Status.Held says why; the next run
// looks at them again), so a replacement the system refused never takes
// the old object with it: a new default route that fails leaves the old
// one in place. Plan runs the same algorithm, so a plan shows this order.
//
// Items that cannot be created are reported in Status.Blocked with the
// reason ("blocked: waiting for link/eth0 (carrier up)"); the items of a
// dependency cycle are reported as errors and never created, while the rest
// of the graph converges. A failed operation leaves the item in the failed
// state with its error and time; every later Reconcile retries it, even
// with the same intent.
//
// Operations run in an order that depends only on the order in which the
// graphs were built and changed, never on map order: the same inputs give
// the same operation log.
//
// # Cost
//
// The reconciler keeps, in the Records, the revision of each
// graph it last looked at. A run starts from what changed since (plus
// failed items and operations in flight) and spreads only to the
// neighbours of what it changes, so its cost follows the size of the
// change, not of the graph; a run with nothing changed does almost nothing.
// Passing a new intended graph instance, or a current graph never
// reconciled before, makes the run look at every item once. The operation
// log is made at the first operation: a run that changes nothing (a no-op
// apply over a read-back) makes none, and Status.OperationLog is nil.
//
// # Asynchronous operations
//
// A configurator may call ContinueInBackground from Create, Modify or
// Delete, return at once and finish later from its own goroutine. The item
// is then in transition; nothing with a dependency path to or from it
// changes until it is done, while unrelated items go on. Status.ReadyToResume
// fires when an operation finishes; the caller then calls Reconcile again,
// with any Reconciler instance given the same Records (WithRecords): the
// handles of operations in flight live there. CancelAsyncOps and
// WaitForAsyncOps act on them. Handles do not survive the process: an item
// that the current graph shows in transition and the records do not know is
// taken as failed (ErrOperationLost) and its operation run again.
//
// # Records
//
// What a run leaves for the next one about a current graph is a Records
// value the caller owns and holds next to that graph (WithRecords; a
// Reconciler made without one keeps its own, Reconciler.Records): failed
// items with their count of failures in a row, blocked items with the item
// each waits for, the operations in flight, and how far the last run looked
// into each graph. The caller reads per-item status from it (Failure, Block,
// InFlight) and saves what outlives a restart (Save, RestoreRecords, JSON):
// failures and blocked notes; operation handles and revision marks do not.
//
// # Dry run
//
// Plan runs the same algorithm on a copy of the current graph without
// calling any configurator operation, and returns the exact operations a
// Reconcile would run now. It is what `netagent plan` prints. The caller
// may say which operations would fail (WithPrediction: it knows what the
// managed system holds that a configurator would refuse); the dry run then
// fails them and blocks their dependants as a real run would.
//
// # The caller's duties
//
//   - Own both graphs and the Records from one goroutine, and keep the
//     current graph between calls while operations are in flight (or rebuild
//     it by reading the system back when none are).
//   - Put external items into the current graph as they are observed.
//   - Keep NeedsRecreate pure, operations idempotent, and never call
//     ContinueInBackground from ApplyBatch.
//   - Call Reconcile again when ReadyToResume fires, when the intent changes,
//     when external items change, and from time to time to retry failures.
//
// The reconciler calls configurators from the caller's goroutine, starts no
// goroutine of its own and does no I/O of its own.
package reconciler
