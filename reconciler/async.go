package reconciler

import (
	"context"
	"sync"
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

// ContinueInBackground, called by a configurator from Create, Modify or
// Delete, turns the operation into an asynchronous one: the configurator
// returns nil at once, keeps working in its own goroutine, watches ctx.Done()
// (closed when the operation is canceled) and calls done exactly once with
// the outcome. Until then the item is in transition: nothing that depends
// on it, or that it depends on, is changed.
//
// Called with a context that does not come from a reconciler, it returns a
// done that does nothing.
func ContinueInBackground(ctx context.Context) (done func(error)) {
	op, _ := ctx.Value(opKey{}).(*opCtx)
	if op == nil {
		return func(error) {}
	}
	op.mu.Lock()
	op.async = true
	if op.finishCh == nil {
		op.finishCh = make(chan struct{})
	}
	op.mu.Unlock()
	return op.finish
}

type opKey struct{}

// opCtx is the context handed to one configurator call. It is also the
// handle of the operation if it goes on in the background, which is why
// it carries its own cancellation instead of a context.WithCancel per call.
type opCtx struct {
	parent context.Context
	ref    dg.ItemRef
	op     Operation
	item   dg.Item
	start  time.Time
	scope  string
	notify *notifier

	mu       sync.Mutex
	async    bool
	canceled bool
	doneCh   chan struct{} // ctx.Done(), made on demand
	stop     func() bool   // detaches from parent cancellation
	finished bool
	err      error
	finishCh chan struct{} // closed by finish
}

var _ context.Context = (*opCtx)(nil)

func (c *opCtx) Deadline() (time.Time, bool) { return c.parent.Deadline() }

func (c *opCtx) Value(key any) any {
	if key == (opKey{}) {
		return c
	}
	return c.parent.Value(key)
}

func (c *opCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.doneCh == nil {
		c.doneCh = make(chan struct{})
		if c.canceled {
			close(c.doneCh)
		} else if c.parent.Done() != nil {
			c.stop = context.AfterFunc(c.parent, c.cancel)
		}
	}
	return c.doneCh
}

func (c *opCtx) Err() error {
	c.mu.Lock()
	canceled := c.canceled
	c.mu.Unlock()
	if canceled {
		return context.Canceled
	}
	return c.parent.Err()
}

func (c *opCtx) cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.canceled {
		return
	}
	c.canceled = true
	if c.doneCh != nil {
		close(c.doneCh)
	}
}

// finish is the done callback of ContinueInBackground.
func (c *opCtx) finish(err error) {
	c.mu.Lock()
	if c.finished {
		c.mu.Unlock()
		return
	}
	c.finished, c.err = true, err
	if c.stop != nil {
		c.stop()
	}
	if c.finishCh != nil {
		close(c.finishCh)
	}
	c.mu.Unlock()
	c.notify.signal(c.scope)
}

// result reports whether the background work finished, and how.
func (c *opCtx) result() (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.finished, c.err
}

// reset readies a context whose synchronous call returned for reuse by the
// next call, saving an allocation per operation.
func (c *opCtx) reset() {
	if c.stop != nil {
		c.stop()
	}
	*c = opCtx{}
}

func (c *opCtx) isAsync() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.async
}

// notifier delivers "an operation finished" to whoever reconciled last.
// It lives in the caller's Records so that a new Reconciler instance takes
// it over.
type notifier struct {
	mu sync.Mutex
	ch chan string
}

// renew replaces the channel returned to callers (one per Reconcile).
func (n *notifier) renew() chan string {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ch = make(chan string, 1)
	return n.ch
}

func (n *notifier) signal(scope string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		return
	}
	select {
	case n.ch <- scope:
	default:
	}
}
