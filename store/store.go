package store

import (
	"context"
	"strconv"
	"time"
)

// Version is a store revision: every write (a put or a delete) gets the
// next one, strictly greater than every version the store gave before,
// whatever the key. An Entry's Version is the revision of the write that
// stored it; a listing's Version is the revision it was read at.
type Version int64

// NoVersion is the version of a key that does not exist: WriteCAS with it
// creates the key, and fails when the key exists.
const NoVersion Version = 0

func (v Version) String() string {
	if v == NoVersion {
		return "none"
	}
	return strconv.FormatInt(int64(v), 10)
}

// Entry is a key, its value and the version of the write that stored it.
type Entry struct {
	Key     string
	Value   []byte
	Version Version
}

// Store is a versioned key-value store (see the package doc).
//
// Keys follow ValidateKey; prefixes are directories (ValidatePrefix). An
// invalid key or prefix fails with an error wrapping ErrInvalidKey and
// nothing is read or written. A backend that cannot answer consistently
// fails with an error wrapping ErrUnavailable. A Store is safe for
// concurrent use.
type Store interface {
	// Read returns key's entry, or an error wrapping ErrNotFound.
	Read(ctx context.Context, key string) (Entry, error)

	// WriteCAS stores value under key if the stored version is expect:
	// NoVersion creates the key (and fails if it exists); any other
	// version replaces the entry of that version. On a mismatch it fails
	// with a *CASError (errors.Is ErrCASFailed) naming both versions and
	// changes nothing. It returns the new version.
	WriteCAS(ctx context.Context, key string, value []byte, expect Version) (Version, error)

	// DeleteCAS removes key if its stored version is expect. A key that
	// does not exist fails with ErrNotFound (whatever expect is); another
	// version with a *CASError. A delete is a write: it takes a version.
	DeleteCAS(ctx context.Context, key string, expect Version) error

	// List returns the entries under prefix, in key order, and the
	// revision they were all read at (a consistent snapshot).
	List(ctx context.Context, prefix string) ([]Entry, Version, error)

	// ListKeys is List without the values: the keys under prefix, in
	// key order, each with its version and a nil Value, and the revision
	// of the listing. No value is read (etcd: a keys-only range; local:
	// its index), so knowing what exists, and at which version, costs the
	// keys only.
	ListKeys(ctx context.Context, prefix string) ([]Entry, Version, error)

	// Watch follows the keys under prefix until ctx ends.
	//
	// With from == NoVersion it first delivers the entries under prefix
	// as Put events, in key order, then a Synced event carrying the
	// revision they were read at, then every change after that revision.
	// With from > 0 it delivers every change after revision from (a
	// revision the backend has compacted away ends the watch with
	// ErrWatchClosed).
	//
	// Changes come in revision order, each once: a put for every write
	// and a delete for every removal, even several of one key. When ctx
	// ends, the channel closes and Err returns ctx's error; when the
	// backend ends the watch, Err wraps ErrWatchClosed and the consumer
	// must discard what it holds and watch from NoVersion again.
	Watch(ctx context.Context, prefix string, from Version) (*Watch, error)

	// Close releases the store; a Watch still running ends.
	Close() error
}

// LeaseID names a lease granted by a Leaser.
type LeaseID int64

// Leaser is the optional part of a Store for writes that must disappear
// when their writer does, such as an agent's status: the key of a leased
// write is removed (a delete event, a new revision) when its lease
// expires, ttl after the last renewal, or is revoked. The etcd backend
// has it; the local one does not (a single host has no one to tell that
// its writer died).
type Leaser interface {
	// GrantLease makes a lease that expires ttl after it is granted or
	// last renewed (backends may round ttl up to a whole second).
	GrantLease(ctx context.Context, ttl time.Duration) (LeaseID, error)
	// KeepAlive renews the lease once; an expired or revoked lease fails
	// with ErrLeaseExpired. Renew about every ttl/3.
	KeepAlive(ctx context.Context, id LeaseID) error
	// RevokeLease ends the lease now and removes its keys.
	RevokeLease(ctx context.Context, id LeaseID) error
	// WriteLeased is WriteCAS attaching key to the lease: it is removed
	// with the lease. An expired lease fails with ErrLeaseExpired.
	WriteLeased(ctx context.Context, key string, value []byte, expect Version, id LeaseID) (Version, error)
}

// Compactor is the optional part of a Store that drops history on
// demand (both backends have it; etcd also compacts by itself when its
// operator says so, the local backend when its log grows).
type Compactor interface {
	// Compact drops the history up to revision rev: a Watch from before
	// it ends with ErrWatchClosed; entries live at rev stay.
	Compact(ctx context.Context, rev Version) error
}
