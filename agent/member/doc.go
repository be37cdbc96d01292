// Package member is the daemon as a fleet member: where its documents come
// from in a shared store, what it writes back there, and its fleet trials;
// and the operator's side of the same layout (`netagent fleet`).
//
//	store (etcd) ──watch──▶ StoreSource ──Load──▶ the agent's loop
//	     ▲                   │  fleet trials          │ Snapshot
//	     │                   ▼  (storetrial.go)       ▼
//	     └──lease, CAS── StatusWriter ◀──Report── StatusOf(snapshot)
//
// A StoreSource (storesource.go) is a source.IntentSource: a host's
// documents and its groups' under package fleet's Layout, named by where
// they come from ("hosts/h1/base.json"), one store watch per directory in
// goroutines of its own. While the store cannot be reached its Load fails
// with ErrSourceUnreachable, so the loop keeps what it has.
//
// The loop takes a Snapshot of itself at the end of every turn; StatusOf
// makes the fleet.Status of it, which the loop hands on (the agent's
// Config.Report) when it is not SameReport as the last. A StatusWriter
// (storestatus.go) writes it, when it changes, under a lease it renews
// without writing; its renewals are what notices an outage.
//
// A document key holding a TrialEnvelope (`fleet push --try`) is a fleet
// trial (storetrial.go): the source delivers its intent, confirms it when
// the agent converged to it and its probes passed, else delivers the
// document's previous version again at its timeout. The loop journals the
// trial's changes through a Journal (journal.go): BeginJournal with a
// BeginFunc (the agent's Config.Trials.Begin), End at every later Load.
//
// The operator's options are checked here before any connection
// (check.go: CheckConn, Place.Check, DocName, CheckHost, Endpoints), with
// errors that name the options of `netagent fleet` and `netagent run`.
//
// The store is etcd, opened in etcd.go alone, the package's only file
// that imports the etcd client (and so gRPC). A build with the tag nofleet
// takes etcd_nofleet.go instead: Built is false, Open and Dial fail with
// ErrNoFleet, and the binary has no etcd client (docs/binary-size.md).
//
// Rules: the package never imports package agent, directly or not; what it
// needs of the loop comes in as values (Snapshot) or callbacks
// (BeginFunc). Its goroutines (watches, probes, the writer) share the
// source's state under its mutex and only tell the loop that the documents
// may have changed.
package member
