package reconciler

import (
	"context"

	dg "github.com/netagent/netagent/depgraph"
)

// Configurator changes the managed system for items of one type. It is the
// only code the reconciler calls that has side effects.
//
// Every operation must be idempotent: creating what already exists as wanted
// succeeds, deleting what is already gone succeeds. A Create that fails must
// leave nothing behind, because a failed create is never followed by a Delete.
type Configurator interface {
	// Create makes item exist.
	Create(ctx context.Context, item dg.Item) error
	// Modify changes oldItem (the current value) into newItem in place.
	Modify(ctx context.Context, oldItem, newItem dg.Item) error
	// Delete removes item (its current value).
	Delete(ctx context.Context, item dg.Item) error
	// NeedsRecreate reports whether turning oldItem into newItem cannot be done
	// in place. It must be a pure function: dry runs call it too. Answer true
	// only for attributes the managed system cannot change, because a recreate
	// first deletes everything that depends on the item.
	NeedsRecreate(oldItem, newItem dg.Item) bool
}

// BatchOp is one operation handed to a BatchConfigurator.
type BatchOp struct {
	Op Operation
	// Old is the current value (Modify, Delete); nil for Create.
	Old dg.Item
	// New is the intended value (Create, Modify); nil for Delete.
	New dg.Item
}

// BatchConfigurator is an optional extension of Configurator: it accepts
// several ready operations of its item type at once. The reconciler only
// batches operations that are mutually independent (no dependency path
// between their items), so they may be applied in any order or atomically.
// Batched operations are synchronous: ContinueInBackground must not be
// called from ApplyBatch.
type BatchConfigurator interface {
	Configurator
	// ApplyBatch applies ops and returns one error (or nil) per op, in order.
	ApplyBatch(ctx context.Context, ops []BatchOp) []error
}

// Operation is a state transition of one item (an alias of depgraph's, so
// that callers of this package need not import both).
type Operation = dg.Operation

// The operations the reconciler runs.
const (
	OpNone   = dg.OpNone
	OpCreate = dg.OpCreate
	OpModify = dg.OpModify
	OpDelete = dg.OpDelete
)
