// Package versions keeps the numbered versions of a target's intended
// state: every intent the agent accepts (a one-shot apply, the daemon's
// merged documents, a rollback) becomes a Version in the state directory,
// so that an operator can list them (netagent history), compare two (diff),
// go back to one (rollback) and refuse to overwrite a change they have not
// seen (compare-and-swap: apply --if-version).
//
// # On disk
//
// <state dir>/versions/<number, 8 digits>.json, one file per version,
// holding its number, time, source ("apply a.json b.json", "daemon: files
// a.json,b.json", "api", "rollback 7"), digest and the merged intent as
// canonical JSON (Canonical: the documents without the objects two of them
// define, merged in name order, marshalled), and the names of the
// documents it was merged from (not their contents: one copy of the intent
// per version is what an edge device can keep). The metadata come before
// the intent in the file, so that List (and a Write learning the current
// digest) reads them without decoding the intent; a Local also keeps the
// metadata it has read or written, by number. A version file is written once and never changed: written to
// a temporary file, synced, hard-linked to its final name (which fails if
// another writer made that number first: no number is lost or given twice)
// and the directory synced; a crash leaves either no version or the whole
// one, and a stray temporary file, which List ignores and the next write
// removes.
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
// hold the target's writer lock (agent/target) while they check, write and
// apply, so that the kernel matches the version that won.
//
// Store is the small interface the rest of netagent uses, so that a
// generic store (local, etcd) can take its place later.
package versions
