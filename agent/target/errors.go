package target

import "errors"

// ErrLocked: another writer (a one-shot apply, or the daemon) holds the
// target's lock.
var ErrLocked = errors.New("another netagent holds the target's lock")

// ErrProtected: an apply would disrupt a protected link (see Protection),
// and was refused before it changed anything.
var ErrProtected = errors.New("the apply would disrupt a protected link")
