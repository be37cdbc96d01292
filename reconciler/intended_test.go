package reconciler_test

import (
	"context"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// intentSeer records what Intended says to each of its calls: single
// ones and a batch's.
type intentSeer struct {
	*recorder
	seen []*dg.Graph
	ok   []bool
}

func (s *intentSeer) see(ctx context.Context) {
	g, ok := reconciler.Intended(ctx)
	s.seen, s.ok = append(s.seen, g), append(s.ok, ok)
}

func (s *intentSeer) Create(ctx context.Context, it dg.Item) error {
	s.see(ctx)
	return s.recorder.Create(ctx, it)
}

func (s *intentSeer) Delete(ctx context.Context, it dg.Item) error {
	s.see(ctx)
	return s.recorder.Delete(ctx, it)
}

func (s *intentSeer) ApplyBatch(ctx context.Context, ops []reconciler.BatchOp) []error {
	s.see(ctx)
	return make([]error, len(ops))
}

// A configurator sees the whole intended graph (the root, also from a
// scoped reconcile), in single calls and in batches; nil, true when
// nothing is intended; nil, false outside a reconcile.
func TestIntendedSeenByConfigurators(t *testing.T) {
	s := &intentSeer{recorder: newRecorder()}
	reg := &reconciler.TypeRegistry{}
	reg.Register("if", s)
	intended := dg.New("intended", mk("if", "eth0"))
	sub := intended.EditSubGraph("file")
	sub.Put(mk("if", "eth1"))
	sub.Put(mk("if", "eth2"))
	r := reconciler.New(reg)
	st := r.Reconcile(ctx, nil, sub)
	if st.Err != nil {
		t.Fatal(st.Err)
	}
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	if st.Err != nil || len(st.OperationLog) != 1 {
		t.Fatalf("%v %v", st.Err, opsOf(st.OperationLog))
	}
	if len(s.seen) != 2 || s.seen[0] != intended || s.seen[1] != intended || !s.ok[0] || !s.ok[1] {
		t.Errorf("the batch and the create saw %v %v, want the intended root twice", s.seen, s.ok)
	}
	r.Reconcile(ctx, st.NewCurrentState, nil)
	if len(s.seen) != 3 || s.seen[2] != nil || !s.ok[2] {
		t.Errorf("deleting everything saw %v %v, want nil, true", s.seen[2:], s.ok[2:])
	}
	if g, ok := reconciler.Intended(context.Background()); g != nil || ok {
		t.Errorf("outside a reconcile: %v, %v", g, ok)
	}
}
