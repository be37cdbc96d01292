// Package agent is netagent's daemon: one event loop that keeps a network
// namespace as the intent says, reacting to intent changes, link events,
// failures and drift, and answering a unix-socket API.
//
//	DirSource (fsnotify) ──name──┐                        ┌── Kernel.ReadLinks
//	(later: etcd, Consul)        │   ┌──────────────────┐ │   (external link items)
//	linkwatch ─────LinkEvent─────┼──▶│   the loop       │─┼── Kernel.Reconcile ──▶ configurators
//	socket API ──call{req,reply}─┤   │ (one goroutine,  │ │   (current ◀─▶ intended)
//	SIGHUP ──Reload──────────────┤   │  one select)     │ ├── Kernel.ReadCurrent (drift)
//	timers: debounce, retry, ────┤   └──────────────────┘ └── Notifier: READY, WATCHDOG, STATUS
//	        drift, watchdog,     │
//	        trial deadline       │
//	trial probes ──probeResult───┘
//
// # One goroutine owns the state
//
// Run owns everything: the intent documents, the intended and current
// graphs, the timers and what the reconciles did. Other goroutines only
// send events: a source's name when it may have changed, a LinkEvent, a
// call from the socket, a reload, the outcome of a trial's probes. The
// loop is one select; a case whose
// channel is nil is off (no pending burst: no debounce timer; no failed
// item: no retry timer; no asynchronous operation: no resume channel).
// Each turn handles one event and, if that event asked for it, runs one
// Reconcile, logged with why it ran: start, intent, reload, link, retry,
// drift, api or resume. The Kernel logs one line per kernel operation.
//
// # Intent sources and documents
//
// A source.IntentSource holds documents by name (source.NewDirSource:
// the *.json files of a directory, watched as a directory so that
// rename-based writes are seen). Watch only says "changed"; after a quiet
// period (200 ms, at most 2 s for a steady stream) the loop Loads the
// source and compares contents. A DirSource also tells a file renamed
// into place, which is complete (source.SettledWatcher): a burst made only
// of those ends after a settle window (20 ms) instead. A document the
// source must not trust (an intent file that a user other than root can
// change: see package source) comes back in a *source.RefusedError; it is
// treated like a document that does not parse.
//
// A member.StoreSource is a fleet member's source (package agent/member):
// a host's documents and its groups' in a shared store. While the store
// cannot be reached its Load fails with member.ErrSourceUnreachable, so
// the loop keeps what it has, and the agent's Degraded condition says
// IntentSourceUnreachable. With Config.Report the loop hands on the
// agent's fleet.Status whenever it changes (fleetreport.go: a snapshot of
// the loop, made a status by member.StatusOf); a member.StatusWriter
// writes it back. A fleet trial's changes are journaled as a socket
// trial's (fleettrial.go: syncFleetTrials begins and ends a
// member.Journal with Config.Trials) and the kernel reverted from the
// journal first.
//
// The socket API is a source too, built in and in memory: `apply` replaces
// its one document, named "api", with the request's intent. It never
// writes to the intent directory. The "api" document is merged with the
// files like any file: an object both define is a conflict, and the apply
// is rejected. An object that two files define is applied from neither
// (intent.WithoutConflicts): both files show the conflict (Valid false,
// reason Conflict) and the rest of each is applied, unless leaving the
// object out breaks something (see resolve): then the change that brought
// it is rejected whole. Its accepted version survives a restart (see the state
// directory below); apply a document with nothing in it to clear it.
//
// Documents are applied together, and a change is only applied if the
// whole stays valid (resolve): the new content of every changed document
// is tried; a document the errors blame falls back to its last good version
// (or, if new, is left out), and if the errors blame only unchanged
// documents (a file removed that others refer to) every change falls back.
// So an invalid file never reaches the kernel and never withdraws its last
// good version; its errors are logged once and shown in status until it is
// fixed. Rendering (agent/render) is part of the check: the graph of the
// accepted set is the intended graph, edited in place so that a small
// change costs the reconciler a small amount of work. An edit of a source
// that changes only one document's routes is not even rendered whole
// (adoptEdit, render.RenderRouteEdit): its routes are validated and
// rendered with the rest of the intent as their context, and their items
// put into the intended graph, which then gives the same graph as a full
// render; any other change, or a state the full path must handle (a
// trial, a rollback in force, orphans, conflicts), is rendered whole.
//
// With a state directory, every accepted version is kept in
// <state dir>/accepted/, so that an agent restarted with a broken file
// applies that file's last good version rather than deleting what it
// created; a stored document whose source cannot be read at start stays
// until the source has been read.
//
// Every change of the accepted documents' merged intent is also a numbered
// version (package agent/versions; see history.go): status shows the
// current one, an apply over the socket with ifVersion is refused when it
// is another, and a rollback (CmdRollback) puts an earlier version in the
// place of the documents until one of them changes. The Guard (below)
// judges a rollback like any other change, before its version is
// recorded; a refused change of a document is no version.
//
// A trial (CmdTry; trial.go) applies a document as the socket API's that
// reverts unless confirmed (CmdConfirm) before its deadline, an alarm of
// the loop: with Config.Trials the target journals before-images for an
// exact revert. Its probes run in a goroutine that posts their outcome
// back into the loop, so the loop never waits for the network. Until it is
// confirmed the trial is no version and its document is not saved;
// confirming writes it into Config.TrialDir. An intent file changed during
// the trial applies at once under it and is a version of its own (the
// documents without the trial): a revert returns to the pre-trial
// documents plus that change, a confirm keeps both.
//
// # Protected links
//
// A Guard (Config.Guard; the daemon's judges against its protected links)
// sees every set of documents after rendering and before it is adopted.
// What it refuses rejects the change like an invalid document, blamed on
// the document that holds (or held) each refused item: that document keeps
// its previous version, the refusal is its error in status, and other
// documents' changes still apply. What it keeps as an orphan stays in the
// intended graph, and status shows it as orphaned with why.
//
// # Links
//
// A LinkWatcher (linkwatch.NewNetlink: an RTNLGRP_LINK subscription made
// in the target namespace; a Resync after ENOBUFS or a re-made one) says that
// links may have changed. After a burst (100 ms) the
// loop lists the external links again (netlink is lossy; the list is the
// truth) and puts the differences into the current state as external
// `link` items. The reconciler does the rest: what depends on a link that
// went or lost its carrier is withdrawn and shows as blocked, and comes
// back when the link returns. A link replaced within one burst (a new
// ifindex) is first taken out and reconciled without, since the kernel
// dropped every object on it. A burst that names a link the agent owns
// (an interface item) also reads the links back alone (Kernel.ReadLinkItems,
// one link dump) and repairs what someone changed on it (checkLinks), as
// the drift check would, without waiting for it; a reload (SIGHUP) runs
// the drift check itself before its reconcile.
//
// Config.Nftables, an nftables event subscription, does the same for
// netagent's nftables tables (nftrepair.go): a burst of other writers'
// changes in them (20 ms) reads them back alone (Kernel.ReadNftItems) and
// repairs them under their drift policies; one written since the last
// drift check goes to that check at once (the Verifier's rule: a writer
// that fights back is held as not converging, with backoff).
//
// # DHCP leases
//
// The lease items' configurators (configurators/dhcp, configurators/dhcp6)
// acquire a lease as an asynchronous operation; Config.Leases and
// Config.Leases6 hold what they got. With Config.Render left nil, the
// intent renders with the leases in use (render.Facts: leaseFacts): a
// DHCPv4 lease's address and routes, a DHCPv6 lease's /128 and DNS, items
// depending on the lease item. Every lease timer after that is the lease
// schedulers' (agent/lease: one scheduler, generic over the family, owns
// the leases in use and decides what is due; its doc states the rules).
// The loop drives them (leases.go): after each reconcile it hands them the
// leases held (syncLeases); one alarm calls them when the soonest lease is
// due (renew at T1, rebind at T2, expire), the exchanges run in goroutines
// that post a lease.Report into the loop (leaseDone); and whatever they
// ask, the loop does (leasesChanged): render the documents again (no new
// version: the intent is the same; a new end refreshes the address's
// kernel lifetime), reconcile, and take the items of the leases let go out
// of the current state after the reconcile that withdrew their addresses,
// so the next one acquires afresh. A carrier loss deletes the lease item
// (it needs the carrier), which lets the lease go; the carrier's return
// acquires it again (INIT-REBOOT of the kept address). At start the leases
// the state directory keeps seed the render, so that a restart withdraws
// nothing while the servers are asked again (DHCPv4) or the leases are
// held and renewed on time (DHCPv6).
//
// # Retries and drift
//
// A failed operation leaves its item failed; the loop reconciles again
// after a backoff of 100 ms doubling up to 1 min, each delay jittered into
// [d/2, d). Each item counts its consecutive failures; the soonest due
// retry wins (every Reconcile retries every failed item). Every
// DriftInterval (5 min) the loop reads the kernel back and puts into the
// current state what someone else changed (an owned object deleted,
// modified, or left over), so that the reconciler repairs it. After a
// reconcile that changed the kernel the check comes after 1 s, since the
// kernel may undo part of a change as a side effect.
//
// Only what the intent's drift policy says repair is repaired (see
// driftpolicy.go; render.DriftOf gives the policies beside the graph, and
// the loop adopts them with it): the difference of a report item is left
// in the kernel, the current state keeps what the agent wrote (so the
// reconciler, which knows no policy, touches nothing), and the item is
// listed in Status.Drifted with the intended and the running values and
// counted once in the metrics as found, not repaired; an ignore item's is
// left too, silently. Differences of the agent's own writes (below) and
// items no longer intended are not drift to leave.
//
// A difference the check finds in an item the agent wrote since the last
// check is a change the kernel did not keep (it clamps a sysctl, another
// program takes a chain's position back). The rule is the one the one-shot
// apply follows (host.Verifier): the first time it is repaired at once,
// like any drift (the kernel may have undone it once as a side effect);
// found undone again, it is not, which would rewrite it every second for
// ever: it shows in status as not-converging with the reason ("the kernel
// did not keep the change: ..."), and is forgotten, the count with it,
// once a check finds the change kept. The daemon adds only the timing: a
// held change falls under the backoff of a failed item (its own count,
// doubling up to the maximum).
//
// Per-item status has one source: the reconciler's Records of the current
// graph, which the agent owns and hands to every Reconcile (failures in a
// row, blocked notes, operations in flight), next to what is the agent's
// own (the changes the kernel did not keep, and their backoff).
//
// # Status
//
// Status (the socket's `status`, `netagent status`) gives per item its
// state (created, failed, blocked, pending, not-converging, or in
// transition), last
// operation and error, since when, consecutive failures and, when blocked,
// on what; per document the conditions Valid, Converged, Degraded and Ready
// with since when each holds; and Ready for the agent: started, every
// source readable, every document valid and converged, nothing failed.
// Package agent/status builds it, by pure functions of a status.Snapshot
// the loop gathers from its state (Agent.snapshot); the Since stamps are
// a status.Memo the loop keeps between builds (loopState.conds), stamped
// after every reconcile (observeConditions) and on every build.
//
// # Events
//
// CmdWatch (events.go; `netagent status --watch`) streams the changes of
// the Status: a connection that stays open, answered with the status, then
// one Event per line as conditions flip, items change state, drift is
// found, links go down or up, trials start and end. While someone
// watches, the loop builds the Status at the end of each turn and
// publishes its differences from the last (api.EventsBetween) into its
// api.Hub; it never waits for a watcher: each has a bounded buffer, and
// one that falls behind misses events and is told how many (EventMissed).
// The stream's transport is agent/api's.
//
// # Metrics
//
// Every Agent has its own Prometheus registry (package agent/metrics;
// Agent.Metrics), never the global one. The loop feeds it from what it
// already has: after each reconcile its reasons and the reconciler's
// operation log (each entry with its kind, operation, outcome and
// duration; an operation on a failed item is a retry), after each drift
// check what it found and, by the next check, what an operation repaired,
// and after each turn a snapshot of the gauges (items by state, from the
// tallies the conditions are computed from; blocked items; the intent
// version; the last converged reconcile; the trial). A scrape reads the
// registry only: the HTTP handler (`run --metrics-listen`) and CmdMetrics,
// which Call answers without going through the loop, never wait for a
// reconcile. The metrics' names, labels and meanings are in the package
// doc of agent/metrics and the README.
//
// # Service manager
//
// The Notifier (package systemd) gets READY after the first reconcile,
// RELOADING and READY around a reload, STOPPING at the end, a STATUS line
// after every reconcile, and a WATCHDOG ping from the loop's own select
// every WatchdogInterval: a loop stuck in a reconcile stops pinging.
//
// # The caller's duties
//
// Configure logging (the agent takes a logrus.FieldLogger), provide a
// Kernel, api.Listen on the socket and api.Serve the Agent on it (it is an
// api.Handler), call Reload on SIGHUP, and cancel Run's context to stop.
// api.Serve removes the socket when its context ends and returns only
// after that: wait for it before the process exits.
package agent
