package reconciler

import (
	"fmt"
	"strings"
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

// OpLogEntry records one operation run (or, in a dry run, planned).
type OpLogEntry struct {
	Ref dg.ItemRef
	// Item is the value operated on: the new value for create and modify,
	// the old one for delete.
	Item dg.Item
	Op   Operation
	// Recreate marks the delete and the create of an item that had to be
	// recreated, and the cascade of its dependants.
	Recreate bool
	// InProgress: the operation goes on in the background (End is zero).
	InProgress bool
	// Batch is the number of operations that ran with this one in one
	// kernel batch (BatchConfigurator), 0 for one run on its own. The
	// entries of one batch share Start and End: the batch's duration.
	// (Op, the flags and Batch share 8 bytes: an entry is 136 bytes, and
	// a log of 100k creates 13.6 MB.)
	Batch      int32
	Start, End time.Time
	Err        error
	// PrevErr is the item's error before this operation (nil if none).
	PrevErr error
}

// String renders the entry as "create route/x" with the outcome.
func (e OpLogEntry) String() string {
	var b strings.Builder
	b.WriteString(e.Op.String())
	b.WriteByte(' ')
	b.WriteString(e.Ref.String())
	if e.Recreate {
		b.WriteString(" (recreate)")
	}
	switch {
	case e.InProgress:
		b.WriteString(": in progress")
	case e.Err != nil:
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// OperationLog lists the operations of one Reconcile in the order they ran.
type OperationLog []OpLogEntry

// String renders one entry per line.
func (l OperationLog) String() string {
	var b strings.Builder
	for _, e := range l {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// CancelFunc cancels the asynchronous operations of the items for which
// the filter returns true, or all of them with a nil filter.
type CancelFunc func(filter func(dg.ItemRef) bool)

// Status is the outcome of a Reconcile.
type Status struct {
	// Err joins one error per failed operation and per item of a dependency
	// cycle; each names its item. Nil when everything done succeeded.
	Err error
	// NewCurrentState is the updated current-state graph (the same graph
	// that was passed in, or a new one if nil was passed; in a dry run, the
	// state the run predicts).
	NewCurrentState *dg.Graph
	// OperationLog lists the operations run, in order (nil if none ran).
	OperationLog OperationLog
	// Blocked gives, for every intended item in scope that does not exist
	// and cannot be created now, or whose modify waits for a conflicting
	// item's deletion, why ("blocked: waiting for link/eth0").
	Blocked map[dg.ItemRef]string
	// BlockedOn gives, for every item of Blocked, the item it waits for
	// (which may itself be blocked, or failed, or external).
	BlockedOn map[dg.ItemRef]dg.ItemRef
	// Held gives, for every item no longer intended that the run did not
	// delete because an item of its type failed to be created or modified
	// (make before break), why. The next run looks at it again.
	Held map[dg.ItemRef]string
	// AsyncOpsInProgress: some operations continue in the background.
	AsyncOpsInProgress bool
	// ReadyToResume receives the path of the subgraph that can resume when
	// an asynchronous operation finishes. Use it until the next Reconcile.
	// Nil when nothing runs in the background.
	ReadyToResume <-chan string
	// CancelAsyncOps cancels background operations (all with nil).
	CancelAsyncOps CancelFunc
	// WaitForAsyncOps blocks until every background operation finished.
	WaitForAsyncOps func()
}
