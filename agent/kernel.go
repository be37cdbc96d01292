package agent

import (
	"context"

	"github.com/netagent/netagent/agent/runtime"
	"github.com/netagent/netagent/configurators/link"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// RuntimeKernel is the Kernel of a namespace opened with agent/runtime:
// its read-back, and a reconciler over its configurators that logs one
// line per kernel operation.
type RuntimeKernel struct {
	rt  *runtime.Runtime
	rec *reconciler.Reconciler
}

// NewRuntimeKernel wraps rt.
func NewRuntimeKernel(rt *runtime.Runtime) *RuntimeKernel {
	return &RuntimeKernel{rt: rt, rec: rt.Reconciler()}
}

// ReadCurrent reads the namespace back (runtime.ReadCurrent).
func (k *RuntimeKernel) ReadCurrent(_ context.Context, hint *dg.Graph) (*dg.Graph, error) {
	return k.rt.ReadCurrent(hint)
}

// ReadLinks lists the links netagent does not own, from one link dump.
func (k *RuntimeKernel) ReadLinks(context.Context) ([]*items.Link, error) {
	list, err := link.ReadBack(k.rt.Target(), nil)
	if err != nil {
		return nil, err
	}
	var out []*items.Link
	for _, it := range list {
		if l, ok := it.(*items.Link); ok {
			out = append(out, l)
		}
	}
	return out, nil
}

// Reconcile runs the reconciler.
func (k *RuntimeKernel) Reconcile(ctx context.Context, current, intended *dg.Graph) reconciler.Status {
	return k.rec.Reconcile(ctx, current, intended)
}

// Plan is a dry run of Reconcile.
func (k *RuntimeKernel) Plan(ctx context.Context, current, intended *dg.Graph) reconciler.Status {
	return k.rec.Plan(ctx, current, intended)
}
