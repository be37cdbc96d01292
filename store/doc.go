// Package store is netagent's interface to a versioned key-value store:
// where a fleet's intents come from (etcd) and where an agent keeps its
// own (the state directory), behind one API, in the shape of Consul's
// storage backends. It is generic: no Linux, no intent types; values are
// bytes.
//
// # Model
//
//	store revision: 1    2    3    4    5    6 ...   (one per write, strictly increasing)
//	                |    |    |    |    |
//	               put  put  del  put  put            (Entry.Version = revision of its write)
//	               a/x  a/y  a/x  b/z  a/y
//
// Every write, a put or a delete, of any key takes the store's next
// revision. An Entry's Version is the revision of the write that stored
// it, so versions of one store strictly increase, and a listing's
// revision orders it against every write: what List returned at
// revision R holds every write up to R and none after.
//
// Keys are paths ("/netagent/hosts/edge-1/base.json"); see ValidateKey.
// Prefixes are directories: "a/b" lists "a/b/c" and "a/b/c/d" but never
// "a/bc" nor "a/b" itself (ValidatePrefix).
//
// # Writes are compare-and-swap
//
// WriteCAS names the version it read (NoVersion: the key must not
// exist); if another writer got there first, it fails with a *CASError
// (errors.Is ErrCASFailed) naming the key and both versions, and the
// caller reads again and decides. Of several writers racing from one
// version, exactly one wins. DeleteCAS likewise; deleting a key that does
// not exist is ErrNotFound. There is no blind write: a read-modify-write
// loop is the caller's.
//
// # Watches
//
// Watch(ctx, prefix, NoVersion) delivers the entries under prefix (Put
// events in key order), a Synced event with the revision they were read
// at, then every later change in revision order, each once. A consumer
// that kept the revision of the last event it handled resumes with
// Watch(ctx, prefix, rev) and misses nothing, as long as the backend
// still has that history. When it does not (compaction), or the backend
// lost what the watch stood on, the watch ends with an error wrapping
// ErrWatchClosed: the consumer discards what it built and watches from
// NoVersion again. Cancelling ctx ends a watch with ctx's error.
//
// # Errors
//
// ErrNotFound, ErrCASFailed (*CASError), ErrUnavailable (the backend
// cannot answer consistently: unreachable, no quorum; a write may or may
// not have happened), ErrWatchClosed, ErrInvalidKey, ErrLeaseExpired,
// ErrClosed. Backends wrap them with the key.
//
// # Leases
//
// A backend that can tell when a writer died implements Leaser: keys
// written under a lease disappear when their writer stops renewing it.
// This is how an agent's status expires with the agent. A backend that
// can drop its history on demand implements Compactor.
//
// # Backends
//
// store/local keeps a store in a directory (one host, several processes);
// store/etcd in an etcd cluster. store/storetest is the conformance suite
// both pass.
package store
