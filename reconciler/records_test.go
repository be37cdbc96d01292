package reconciler_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// The caller's records say which items failed (how often in a row, when)
// and which are blocked (on what, since when); what survives a restart goes
// through JSON, and a Reconciler over a fresh read-back continues from it.
func TestRecordsSaveAndRestore(t *testing.T) {
	rec := newRecorder()
	rec.fail["create t/a"] = errors.New("busy")
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	clock := reconciler.WithClock(func() time.Time { return now })
	records := reconciler.NewRecords()
	r := reconciler.New(registry(rec, "t"), clock, reconciler.WithRecords(records))
	intended := dg.New("intended", mk("t", "a"), mk("t", "b", "t/a"))
	st := r.Reconcile(ctx, nil, intended)
	blockedAt := now
	now = now.Add(time.Minute)
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "create t/a (failed)")

	f, ok := records.Failure(ref("t/a"))
	if !ok || f.Count != 2 || !f.At.Equal(now) || f.Op != reconciler.OpCreate {
		t.Fatalf("failure %+v %v", f, ok)
	}
	b, ok := records.Block(ref("t/b"))
	if !ok || b.On != ref("t/a") || !b.Since.Equal(blockedAt) || b.Reason != st.Blocked[ref("t/b")] {
		t.Fatalf("block %+v %v (status %q)", b, ok, st.Blocked[ref("t/b")])
	}

	data, err := json.Marshal(records)
	if err != nil {
		t.Fatal(err)
	}
	var restored reconciler.Records
	if err := json.Unmarshal(data, &restored); err != nil {
		t.Fatal(err)
	}
	if got, want := restored.Save(), records.Save(); !jsonEqual(t, got, want) {
		t.Fatalf("restored %+v, want %+v", got, want)
	}
	if f2, _ := restored.Failure(ref("t/a")); f2 != f {
		t.Fatalf("restored failure %+v, want %+v", f2, f)
	}

	// After a restart: the kernel read back holds nothing; the restored
	// records keep the count going, and a success forgets it.
	now = now.Add(time.Minute)
	r = reconciler.New(registry(rec, "t"), clock, reconciler.WithRecords(&restored))
	st = r.Reconcile(ctx, dg.New("read back"), intended)
	expectOps(t, st.OperationLog, "create t/a (failed)")
	if f, _ := restored.Failure(ref("t/a")); f.Count != 3 {
		t.Fatalf("count after restart %d", f.Count)
	}
	if b, _ := restored.Block(ref("t/b")); !b.Since.Equal(blockedAt) {
		t.Fatalf("blocked since %v after restart, want %v", b.Since, blockedAt)
	}
	delete(rec.fail, "create t/a")
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "create t/a", "create t/b")
	if len(restored.Failed()) != 0 || len(restored.Blocked()) != 0 {
		t.Fatalf("records after success: failed %v blocked %v", restored.Failed(), restored.Blocked())
	}
}

func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}

// Records given another current graph (a new read-back) do not trust how
// far they looked into the last one: the run looks at every item.
func TestRecordsOfAnotherGraphLookAtEverything(t *testing.T) {
	rec := newRecorder()
	records := &reconciler.Records{} // the zero value is ready to use
	r := reconciler.New(registry(rec, "t"), reconciler.WithRecords(records))
	intended := dg.New("intended", mk("t", "a"), mk("t", "b"))
	st := r.Reconcile(ctx, nil, intended)
	expectOps(t, st.OperationLog, "create t/a", "create t/b")
	// A read-back made of as many changes, where b drifted.
	readBack := dg.New("read back", mk("t", "a"), mk("t", "b").with("drifted"))
	for readBack.Rev() < st.NewCurrentState.Rev() {
		readBack.Put(mk("t", "a").with("x"))
		readBack.Put(mk("t", "a"))
	}
	st = r.Reconcile(ctx, readBack, intended)
	expectOps(t, st.OperationLog, "modify t/b")
}

// An operation the current state shows in flight, which the records do not
// know (the records were restored after the process that ran it died), is
// done again.
func TestLostOperationIsDoneAgain(t *testing.T) {
	rec := newRecorder()
	cur := dg.New("current")
	cur.PutWithState(mk("t", "a"), dg.StateData{State: dg.StateCreating, LastOp: dg.OpCreate})
	cur.PutWithState(mk("t", "b").with("v1"), dg.StateData{State: dg.StateModifying, LastOp: dg.OpModify})
	intended := dg.New("intended", mk("t", "a"), mk("t", "b").with("v2"))
	st := reconciler.New(registry(rec, "t")).Reconcile(ctx, cur, intended)
	expectOps(t, st.OperationLog, "modify t/b", "create t/a")
	if st.Err != nil || st.AsyncOpsInProgress {
		t.Fatalf("err %v async %v", st.Err, st.AsyncOpsInProgress)
	}
	if e := st.OperationLog[1].PrevErr; !errors.Is(e, reconciler.ErrOperationLost) {
		t.Fatalf("prev err %v", e)
	}
}

// A dry run works on a copy of the records.
func TestPlanLeavesRecords(t *testing.T) {
	rec := newRecorder()
	rec.fail["create t/a"] = errors.New("busy")
	records := reconciler.NewRecords()
	r := reconciler.New(registry(rec, "t"), reconciler.WithRecords(records),
		reconciler.WithPrediction(func(op reconciler.Operation, it dg.Item) error { return rec.fail[op.String()+" "+dg.Ref(it).String()] }))
	intended := dg.New("intended", mk("t", "a"), mk("t", "b", "t/a"))
	st := r.Reconcile(ctx, nil, intended)
	before := records.Save()
	plan := r.Plan(ctx, st.NewCurrentState, intended)
	expectOps(t, plan.OperationLog, "create t/a (failed)")
	if !jsonEqual(t, records.Save(), before) {
		t.Fatalf("plan changed the records: %+v, was %+v", records.Save(), before)
	}
}
