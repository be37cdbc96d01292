package depgraph

import "time"

// Operation is a state transition of one item.
type Operation uint8

// The operations a reconciler runs.
const (
	OpNone Operation = iota
	OpCreate
	OpModify
	OpDelete
)

// String returns "create", "modify", "delete" (or "none").
func (o Operation) String() string {
	switch o {
	case OpCreate:
		return "create"
	case OpModify:
		return "modify"
	case OpDelete:
		return "delete"
	}
	return "none"
}

// State is where an item of the current-state graph stands.
type State int

// The states of an item in the current-state graph.
const (
	// StateUnknown: nothing is known (the zero value).
	StateUnknown State = iota
	// StateCreated: the item exists as described.
	StateCreated
	// StateFailed: the last operation failed; StateData.LastErr says why.
	StateFailed
	// StateCreating, StateModifying, StateDeleting: an asynchronous
	// operation is in flight.
	StateCreating
	StateModifying
	StateDeleting
)

// String returns the state's name.
func (s State) String() string {
	switch s {
	case StateCreated:
		return "created"
	case StateFailed:
		return "failed"
	case StateCreating:
		return "creating"
	case StateModifying:
		return "modifying"
	case StateDeleting:
		return "deleting"
	}
	return "unknown"
}

// InTransition reports whether an asynchronous operation is in flight.
func (s State) InTransition() bool {
	return s == StateCreating || s == StateModifying || s == StateDeleting
}

// StateData is what the current-state graph records next to each item.
// Callers that build a current state by reading the system back put items
// with StateData{State: StateCreated} (or nil, which means the same).
type StateData struct {
	State   State
	LastOp  Operation
	LastErr error
	// Since is when the item last changed state (the end of its last
	// operation, or the start of one in flight).
	Since time.Time
}
