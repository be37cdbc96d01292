package reconciler_test

import (
	"errors"
	"slices"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// A dry run with a prediction plans what a real run does when that
// operation fails: the item fails with the predicted error, its dependants
// are blocked, unrelated items go on; the log, the errors and the blocked
// items are the real run's.
func TestPlanPredictsFailures(t *testing.T) {
	errTaken := errors.New("exists and is not owned")
	intended := dg.New("intended", mk("t", "if"), mk("t", "addr", "t/if"), mk("t", "route", "t/addr"), mk("t", "other"))
	predict := func(op reconciler.Operation, it dg.Item) error {
		if op == reconciler.OpCreate && dg.Ref(it) == ref("t/if") {
			return errTaken
		}
		return nil
	}
	rec := newRecorder()
	plan := reconciler.New(registry(rec, "t"), reconciler.WithPrediction(predict)).Plan(ctx, nil, intended)
	if calls := rec.Calls(); len(calls) != 0 {
		t.Fatalf("plan called a configurator: %v", calls)
	}
	rec.fail["create t/if"] = errTaken
	real := reconciler.New(registry(rec, "t"), reconciler.WithPrediction(predict)).Reconcile(ctx, nil, intended)
	if calls := rec.Calls(); !slices.Equal(calls, []string{"create t/if", "create t/other"}) {
		t.Fatalf("Reconcile used the prediction: calls %v", calls)
	}
	if got, want := opsOf(plan.OperationLog), opsOf(real.OperationLog); !slices.Equal(got, want) {
		t.Errorf("plan %v\nreal %v", got, want)
	}
	expectOps(t, plan.OperationLog, "create t/if (failed)", "create t/other")
	if !errors.Is(plan.Err, errTaken) || plan.OperationLog[0].Err != errTaken {
		t.Errorf("plan errors: %v; log %v", plan.Err, plan.OperationLog)
	}
	for _, r := range []string{"t/addr", "t/route"} {
		if plan.Blocked[ref(r)] == "" || plan.Blocked[ref(r)] != real.Blocked[ref(r)] {
			t.Errorf("%s: plan says %q, the real run %q", r, plan.Blocked[ref(r)], real.Blocked[ref(r)])
		}
	}
	if _, st, ok := plan.NewCurrentState.Lookup(ref("t/if")); ok && st.State != dg.StateFailed {
		t.Errorf("predicted current state of t/if: %v", st)
	}
}
