package target

import "errors"

// ErrLocked: another writer (a one-shot apply, or the daemon) holds the
// target's lock.
var ErrLocked = errors.New("another netagent holds the target's lock")
