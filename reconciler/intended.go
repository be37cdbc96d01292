package reconciler

import (
	"context"

	dg "github.com/netagent/netagent/depgraph"
)

// Intended returns, to a configurator that Reconcile calls (Create,
// Modify, Delete, ApplyBatch), the intended graph of that reconcile, all
// of it (the root, also when the reconcile has a scope), and true; the
// graph is nil when nothing is intended (a nil intended graph). Called with
// a context that does not come from a reconciler, it returns nil, false.
//
// It is for an operation that must see the other intended items to be
// done right (a NIC that holds the name another interface is to get may be
// renamed out of the way only when the intent names it elsewhere). The
// configurator only reads it; the other items' operations remain theirs.
func Intended(ctx context.Context) (*dg.Graph, bool) {
	v, ok := ctx.Value(intendedKey{}).(intendedValue)
	return v.g, ok
}

type intendedKey struct{}

type intendedValue struct{ g *dg.Graph }

// withIntended is ctx carrying the run's intended root (see Intended).
func withIntended(ctx context.Context, root *dg.Graph) context.Context {
	return context.WithValue(ctx, intendedKey{}, intendedValue{root})
}
