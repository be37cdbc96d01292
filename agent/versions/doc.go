// Package versions keeps the numbered versions of a target's intended
// state: every intent the agent accepts (a one-shot apply, the daemon's
// merged documents, a rollback) becomes a Version in the state directory,
// so that an operator can list them (netagent history), compare two (diff),
// go back to one (rollback) and refuse to overwrite a change they have not
// seen (compare-and-swap: apply --if-version).
//
// # In a store
//
// The versions live in a store.Store (package store): the state
// directory's local store, <state dir>/store (package store/local: atomic,
// fsynced, shared safely by the daemon and the CLI), or any other
// (OnStore). Two kinds of keys:
//
//	versions/index                    the kept versions' metadata, oldest first: number,
//	                                  time, source ("apply a.json b.json", "daemon: files
//	                                  a.json,b.json", "api", "rollback 7"), digest, and the
//	                                  names of the documents merged (not their contents)
//	versions/intents/sha256:<digest>  a merged intent as canonical JSON (Canonical: the
//	                                  documents without the objects two of them define,
//	                                  merged in name order, marshalled), once per digest
//
// List reads the index alone, never an intent. A Write stores the intent
// first (unless a kept version has it already: a rollback, or an intent
// applied again, writes none), then the index naming the new version,
// compare-and-swap on the index it read: that write is the commit, so two
// writers never get one number and a writer killed at any point leaves
// the previous version current, or the new one, whole. Then it deletes
// the intents no kept version names (also those a killed writer left),
// unless written after its index (a racing writer's, whose index is to
// come). The local store keeps a short history and removes a deleted
// intent's file at once: one copy of each kept intent is what an edge
// device can keep.
//
// # The former format
//
// Before the store, <state dir>/versions/<number, 8 digits>.json held one
// version each. Opening a state directory that has one migrates it: the
// newest Keep versions, numbers, times, sources and all, are written into
// the store (intents compacted) and the directory is removed after. A
// migration interrupted, or run by two processes at once, imports nothing
// twice.
//
// The current version is the highest number. Accepting the digest of the
// current version again makes no new version. After a write, all but the
// newest Keep versions are removed; the newest is never removed, so numbers
// strictly increase and are never given again.
//
// # Compare-and-swap
//
// Write with an expected number (not Any) fails with a *ConflictError
// (errors.Is ErrConflict) when the current version is another: two writers
// that both expect N race for N+1 and exactly one gets it. The callers also
// hold the target's writer lock (agent/host) while they check, write and
// apply, so that the kernel matches the version that won.
//
// Store is the small interface the rest of netagent uses; Local, its
// implementation, keeps the versions in any store.Store.
package versions
