package reconciler

import "errors"

// Sentinel errors; the errors in a Status wrap them.
var (
	// ErrNoConfigurator: no configurator is registered for the item's type.
	ErrNoConfigurator = errors.New("no configurator registered for item type")
	// ErrDuplicateType: a type was registered twice.
	ErrDuplicateType = errors.New("item type already has a configurator")
	// ErrCycle: the item is part of a dependency cycle and cannot be created.
	ErrCycle = errors.New("dependency cycle")
	// ErrCanceled: an asynchronous operation was canceled.
	ErrCanceled = errors.New("operation canceled")
	// ErrOperationLost: the current state shows an operation in flight
	// that the records do not know (records restored, or of another
	// graph): its outcome is unknown, and the run does it again.
	ErrOperationLost = errors.New("operation in flight lost with its records")
)
