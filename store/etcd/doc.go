// Package etcd is the store backend of a fleet: a store.Store (and
// store.Leaser) in an etcd cluster, through go.etcd.io/etcd/client/v3
// (the v3 gRPC API: KV, Txn, Watch, Lease, Compact; tested against
// Debian bookworm's etcd 3.4).
//
// # Mapping
//
//   - A Version is etcd's revision: an entry's version is its
//     mod_revision, a listing's the header revision of its range read.
//   - WriteCAS and DeleteCAS are one transaction each: if the key's
//     mod_revision equals the expected version (0 for a key that does not
//     exist) then put (or delete) else read the key, whose mod_revision
//     names the stored version in the *store.CASError.
//   - Watch lists the prefix (a range read at revision R), delivers it,
//     then watches from R+1 with a prefix watch that requires a leader.
//     etcd's client resumes a watch whose connection broke after the
//     last revision it delivered; a compacted history (CompactRevision)
//     or a cancelled watch ends it with store.ErrWatchClosed.
//   - Leases are etcd leases (whole seconds); WriteLeased puts with the
//     lease attached.
//
// # Availability
//
// Every operation is bounded by Config.RequestTimeout (unless ctx ends
// sooner): an operation that gets no answer, because no member is up or
// none has a leader, fails with store.ErrUnavailable. A write that timed
// out may still have been applied: read before writing again. A running
// watch does not end when the cluster goes away; it resumes when it
// comes back. Watchers that need to know about an outage learn it from
// their other operations (a lease renewal failing with ErrUnavailable).
//
// # Limits
//
// A value and its key must fit in one etcd request: 1.5 MiB by default
// (the server's --max-request-bytes). Keys follow store.ValidateKey;
// Config.Namespace is prepended to them on the wire.
package etcd
