// Package host acts on one target network namespace, once: what both
// the one-shot CLI (`netagent apply`, `plan`, `check`, `show`) and the
// daemon need. It holds no memory between calls: every call rebuilds the
// current state by reading the kernel back (configurators.ReadItems), with
// the intended graph as the hint, so a restarted agent, or a CLI run that
// never ran before, sees exactly what the kernel holds. The current graph
// shares the items that read back as intended with the intended graph.
// Building it, comparing the two graphs (Summarize, Compare, the
// verification after a pass) and finding each item's intended node walk
// the graphs in the order their items were put, never sorting 100k refs:
// what they find (problems, differences, drifts) is sorted instead.
//
//	intended graph ─┐
//	                ▼
//	kernel ──ReadCurrent──▶ current graph ──reconciler──▶ configurators ──▶ kernel
//	                              │              │
//	                              │              └─ one log line per operation (LogOp)
//	                              ▼
//	               Plan: the operations an Apply would run (nothing changes),
//	                     with the failures configurators.Clashes predicts and
//	                     the follow-up passes configurators.SideEffects does,
//	                     and what each does to traffic (PredictOps,
//	                     SummarizeDisruption)
//	               Apply: run them, wait for background ones, report per item
//	                      (ApplyPredicted: and what each did to traffic, as Plan)
//	               Check: running vs intended, field by field (nothing changes)
//
// Apply deletes every object netagent owns that the intended graph does
// not hold: apply an intent and the namespace holds that intent, no more.
// Objects netagent does not own (foreign links, routes, rules, chains) are
// never touched; the configurators tell them apart by their marks.
//
// Apply writes, reads back and writes again what the kernel undid, by the
// rule the daemon's drift check follows too (Verifier, Converge): a change
// undone twice in a row is not written again but reported as not
// converging (Problem.Unkept) with what the kernel holds.
//
// Apply can wait (ApplyOptions.Wait) for the link events its own changes
// cause: it subscribes to the namespace's link events (agent/linkwatch)
// before it changes anything, and while items are blocked (routes over a
// link whose carrier comes a moment after Apply set it up) converges again
// at each event, returning as soon as nothing is blocked or the wait ends.
//
// One writer at a time: TryLock and WaitLock take a target's lock, an
// flock on <state dir>/lock that the kernel releases when its holder dies
// however it dies; the holder writes who it is (pid, command, and a
// daemon's socket) into the file, and HolderOf reads it without waiting.
// The CLI's apply holds it for its run, the daemon for its life, and both
// take it before Open, so that no two writers interleave their changes or
// their records.
//
// Protected links (Protection: --protect, and "protected" in the intent):
// Guard runs the apply as a dry run first and Judge sorts out every
// operation that would disrupt one: a removal from an intent that
// protected the link becomes an Orphan, put back into a copy of the
// intended graph as the kernel holds it so that the apply keeps it; every
// other disruption is a Refusal, and the caller refuses the apply
// (RefusedError, ErrProtected) before anything changes. The links an
// applied intent protected are remembered in <state dir>/protected.json,
// so that a later intent leaving them out orphans them.
//
// Applying the same intent twice makes no kernel write the second time:
// read-back spells unset fields as the hint does, so every item compares
// Equal and the reconciler plans nothing.
//
// A trial (BeginTrial, `netagent try`) is a change that can be undone
// exactly, also after a crash: the trial is recorded in the state
// directory before its first change, and the before-image of every item
// it changes is journaled (fsynced, one record per reconciler wave, through
// the reconciler's WithBeforeChange hook) before the kernel changes it.
// Confirm removes the record; a revert reconciles to the current state
// with each journaled item replaced by its before-image; Recover reverts a
// trial whose process died (see trial.go and journal.go).
//
// The kernel also drops objects by itself when a link goes (deleted,
// recreated, set down, moved to another master, or stripped of an
// address): the routes through it and its neighbour entries, someone
// else's included. Before a wave that can do that to a link, the same
// record saves what is at risk on it: the before-images of netagent's
// items that depend on the link, and someone else's routes and permanent
// neighbours on it (l3.ForeignAtRisk; once per link, never for a link the
// trial created). The revert, once converged, puts back those of them the
// kernel does not hold (l3.RestoreForeign).
//
// A Runtime reaches the kernel only through the configurator packages,
// behind one seam (namespace.go): Open puts the target namespace behind
// it, OpenFake a configurators.Fake, so that Plan, Apply, Check and the
// daemon's Kernel run the real configurators without root or a namespace
// (fakens_test.go). Trials, DHCP and the wait for link events need the
// namespace itself.
//
// The package logs through a logrus.FieldLogger given by the caller and
// configures no logger itself.
package host
