// Package status is what `netagent status` shows, and the model every
// form of check reports in: the agent as a whole, each intent document
// with its conditions, each item with its state, the links, leases,
// trial and drift (types.go), built by pure functions of a Snapshot.
//
// # The model
//
// An item's state is a depgraph state (created, failed, creating,
// modifying, deleting) or one of the agent's: pending, blocked,
// not-converging (the kernel did not keep its last change) and orphaned
// (kept although no document holds it). A document has four conditions,
// in this order: Valid (its source's content is the applied one),
// Converged (every item of it is created), Degraded (an item failed, is
// blocked or does not converge) and Ready (Valid and Converged). The
// agent has its own Ready and Degraded (AgentConditions). A condition's
// Since is when its status last flipped.
//
// # The rules
//
//   - Everything here is a function of its arguments: the daemon's loop
//     gathers a Snapshot of its state (on the loop goroutine, which owns
//     it) and calls Build, Observe or AgentConditions; nothing here reads
//     a clock, a file or the kernel, or keeps state of its own.
//   - The Since stamps persist between builds in a Memo that the caller
//     keeps: each build takes the last one and returns the next, and never
//     changes the one it was given.
//   - A Snapshot shares the loop's graphs and records (it does not copy
//     100k items); the functions only read them, so a build must run
//     where they cannot change (on the loop).
//   - Walks over every item (Observe, ItemCounts) do not sort: they run
//     after every reconcile, at 100k items.
//   - The package imports no part of the agent root package (agent); the
//     root, the socket API, the fleet member and the one-shot commands
//     import it.
package status
