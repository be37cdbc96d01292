package store

import (
	"errors"
	"fmt"
)

var (
	// ErrNotFound: the key does not exist (Read, DeleteCAS).
	ErrNotFound = errors.New("key not found")

	// ErrCASFailed: a WriteCAS or DeleteCAS expected another version than
	// the stored one. It comes wrapped in a *CASError naming the key and
	// both versions.
	ErrCASFailed = errors.New("compare-and-swap failed: the stored version is not the one expected")

	// ErrUnavailable: the store could not do the operation consistently
	// (unreachable, no quorum, timed out). The operation may or may not have
	// taken effect for a write; read again before retrying a CAS.
	ErrUnavailable = errors.New("store unavailable")

	// ErrWatchClosed: the backend ended a watch (its history was compacted,
	// the backend restarted or lost what the watch stood on). The consumer
	// must discard what it built from the watch and list (or watch from
	// version 0) again.
	ErrWatchClosed = errors.New("watch closed: discard what it delivered and list again")

	// ErrInvalidKey: a key or prefix breaks the rules of ValidateKey.
	ErrInvalidKey = errors.New("invalid key")

	// ErrLeaseExpired: the lease of a leased write expired or was revoked;
	// grant a new one and write again.
	ErrLeaseExpired = errors.New("lease expired")

	// ErrClosed: the Store was closed.
	ErrClosed = errors.New("store closed")
)

// CASError is a failed compare-and-swap (errors.Is ErrCASFailed).
type CASError struct {
	Key string
	// Expected is the version the caller gave; Stored is the version
	// found (NoVersion: the key does not exist).
	Expected, Stored Version
}

func (e *CASError) Error() string {
	return fmt.Sprintf("%v: key %q expected version %s, stored %s", ErrCASFailed, e.Key, e.Expected, e.Stored)
}

// Is makes errors.Is(err, ErrCASFailed) hold.
func (e *CASError) Is(target error) bool { return target == ErrCASFailed }

// NotFound returns ErrNotFound wrapped with key.
func NotFound(key string) error { return fmt.Errorf("key %q: %w", key, ErrNotFound) }
