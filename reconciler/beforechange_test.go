package reconciler_test

import (
	"errors"
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// Every operation is announced to the before-change hook, with the item's
// before-image, before the configurator runs it: the hook's call comes
// first in the shared log, once per wave.
func TestBeforeChangeSeesEveryOpBeforeItRuns(t *testing.T) {
	rec := newRecorder()
	var seen []string
	var images []dg.Item
	hook := func(ops []reconciler.PlannedOp) error {
		done := rec.Calls()
		for _, op := range ops {
			seen = append(seen, op.Op.String()+" "+op.Ref.String())
			images = append(images, op.Old)
			if slices.Contains(done, op.Op.String()+" "+op.Ref.String()) {
				t.Errorf("%s %s ran before the hook saw it", op.Op, op.Ref)
			}
		}
		return nil
	}
	r := reconciler.New(registry(rec, "t"), reconciler.WithBeforeChange(hook))
	intended := dg.New("intended", mk("t", "A", "t/B"), mk("t", "B"), mk("t", "C"))
	st := r.Reconcile(ctx, nil, intended)
	if st.Err != nil {
		t.Fatal(st.Err)
	}
	intended.Put(mk("t", "B").with("v2"))
	intended.Delete(ref("t/C"))
	seen, images = nil, nil
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "modify t/B", "delete t/C")
	if !slices.Equal(seen, []string{"modify t/B", "delete t/C"}) {
		t.Fatalf("hook saw %v", seen)
	}
	for i, img := range images {
		if img == nil || img.(*item).Value != "" {
			t.Errorf("%s: before-image %v, want the old value", seen[i], img)
		}
	}
}

// A failing hook stops its wave: nothing of it reaches the configurator,
// each operation fails with the hook's error, dependants are not created.
func TestBeforeChangeFailureRunsNothing(t *testing.T) {
	rec := newRecorder()
	boom := errors.New("journal full")
	r := reconciler.New(registry(rec, "t"), reconciler.WithBeforeChange(func([]reconciler.PlannedOp) error { return boom }))
	st := r.Reconcile(ctx, nil, dg.New("intended", mk("t", "A", "t/B"), mk("t", "B")))
	if calls := rec.Calls(); len(calls) != 0 {
		t.Fatalf("configurator called: %v", calls)
	}
	if !errors.Is(st.Err, boom) {
		t.Fatalf("err %v, want the hook's", st.Err)
	}
	if _, sd, ok := st.NewCurrentState.Lookup(ref("t/B")); ok && sd.State != dg.StateFailed {
		t.Fatalf("B is %v, want failed", sd.State)
	}
	if _, sd, ok := st.NewCurrentState.Lookup(ref("t/A")); ok && sd.State == dg.StateCreated {
		t.Fatal("A created")
	}
}

// A dry run never calls the hook.
func TestBeforeChangeNotInPlan(t *testing.T) {
	called := false
	r := reconciler.New(registry(newRecorder(), "t"), reconciler.WithBeforeChange(func([]reconciler.PlannedOp) error { called = true; return nil }))
	r.Plan(ctx, nil, dg.New("intended", mk("t", "A")))
	if called {
		t.Fatal("Plan called the hook")
	}
}
