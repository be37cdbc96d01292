package reconciler_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

var ctx = context.Background()

func expectOps(t *testing.T, got reconciler.OperationLog, want ...string) {
	t.Helper()
	if g := opsOf(got); !slices.Equal(g, want) {
		t.Fatalf("operation log:\n got  %q\n want %q", g, want)
	}
}

// The seed's first control-flow example: A depends on B, both synchronous.
func TestSyncCreatesDependencyFirst(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	intended := dg.New("intended", mk("t", "A", "t/B"), mk("t", "B"))
	st := r.Reconcile(ctx, nil, intended)
	if st.Err != nil {
		t.Fatal(st.Err)
	}
	expectOps(t, st.OperationLog, "create t/B", "create t/A")
	if !slices.Equal(rec.Calls(), []string{"create t/B", "create t/A"}) {
		t.Fatal("configurator calls differ from the log")
	}
	if st.AsyncOpsInProgress || st.NewCurrentState.Len() != 2 {
		t.Fatalf("async=%v len=%d", st.AsyncOpsInProgress, st.NewCurrentState.Len())
	}
}

// The second: B is created asynchronously; A waits for the resume signal.
func TestAsyncCreateResumesWithNewReconciler(t *testing.T) {
	rec := newRecorder()
	records := reconciler.NewRecords() // the caller's: each new Reconciler continues from them
	release := make(chan error)
	rec.async["create t/B"] = release
	intended := dg.New("intended", mk("t", "A", "t/B"), mk("t", "B"))

	st := reconciler.New(registry(rec, "t"), reconciler.WithRecords(records)).Reconcile(ctx, nil, intended)
	expectOps(t, st.OperationLog, "create t/B (in progress)")
	if !st.AsyncOpsInProgress || st.ReadyToResume == nil {
		t.Fatal("want an async operation in progress")
	}
	if got := st.Blocked[ref("t/A")]; got != "blocked: waiting for t/B (creating)" {
		t.Fatalf("A blocked reason %q", got)
	}
	if s, _ := st.NewCurrentState.State(ref("t/B")); s.State != dg.StateCreating {
		t.Fatalf("B state %v", s.State)
	}
	release <- nil
	select {
	case scope := <-st.ReadyToResume:
		if scope != "" {
			t.Fatalf("resume scope %q", scope)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadyToResume never fired")
	}
	st = reconciler.New(registry(rec, "t"), reconciler.WithRecords(records)).Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "create t/B", "create t/A")
	if st.AsyncOpsInProgress || st.Err != nil || len(st.Blocked) != 0 {
		t.Fatalf("after resume: async=%v err=%v blocked=%v", st.AsyncOpsInProgress, st.Err, st.Blocked)
	}
}

// The third: B is external; nothing happens until it appears.
func TestExternalDependencyGatesCreate(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	intended := dg.New("intended", mk("t", "A", "ext/B"))
	st := r.Reconcile(ctx, nil, intended)
	expectOps(t, st.OperationLog)
	if got := st.Blocked[ref("t/A")]; got != "blocked: waiting for ext/B (not in the intended state)" {
		t.Fatalf("blocked %q", got)
	}
	cur := st.NewCurrentState
	cur.Put(ext("ext", "B"))
	st = r.Reconcile(ctx, cur, intended)
	expectOps(t, st.OperationLog, "create t/A")
	if len(rec.Calls()) != 1 {
		t.Fatal("external item must never reach a configurator")
	}
}

func TestRecreateCascade(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	intended := dg.New("intended", mk("t", "if"), mk("t", "addr", "t/if"), mk("t", "route", "t/addr"), mk("t", "other"))
	st := r.Reconcile(ctx, nil, intended)
	intended.Put(mk("t", "if").fixed("vlan 200"))
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog,
		"delete t/route", "delete t/addr", "delete t/if", "create t/if", "create t/addr", "create t/route")
	for _, e := range st.OperationLog {
		if !e.Recreate {
			t.Fatalf("%s not marked as part of a recreate", e)
		}
	}
}

func TestModifyInPlaceKeepsDependants(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	intended := dg.New("intended", mk("t", "if"), mk("t", "addr", "t/if"))
	st := r.Reconcile(ctx, nil, intended)
	intended.Put(mk("t", "if").with("mtu 9000"))
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "modify t/if")
	if it, _ := st.NewCurrentState.Get(ref("t/if")); it.(*item).Value != "mtu 9000" {
		t.Fatal("current state not updated")
	}
}

func TestRecreateWhenModified(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	dep := mk("t", "A")
	dep.deps = []dg.Dependency{{RequiredItem: ref("t/B"), RecreateWhenModified: true}}
	intended := dg.New("intended", dep, mk("t", "B"))
	st := r.Reconcile(ctx, nil, intended)
	intended.Put(mk("t", "B").with("v2"))
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "delete t/A", "modify t/B", "create t/A")
}

func linkUp(it dg.Item) bool { return it.(*item).Value == "up" }

func TestExternalAppearDisappearAndPredicateFlip(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	route := mk("t", "route", "t/if")
	ifc := mk("t", "if")
	ifc.deps = []dg.Dependency{{RequiredItem: ref("link/eth0"), MustSatisfy: linkUp, Description: "link up"}}
	intended := dg.New("intended", ifc, route)
	cur := dg.New("current")
	cur.Put(ext("link", "eth0").with("down"))

	st := r.Reconcile(ctx, cur, intended)
	expectOps(t, st.OperationLog)
	if got := st.Blocked[ref("t/if")]; got != "blocked: waiting for link/eth0 (link up)" {
		t.Fatalf("blocked %q", got)
	}
	cur.Put(ext("link", "eth0").with("up"))
	st = r.Reconcile(ctx, cur, intended)
	expectOps(t, st.OperationLog, "create t/if", "create t/route")

	cur.Put(ext("link", "eth0").with("down")) // predicate turns false: withdraw
	st = r.Reconcile(ctx, cur, intended)
	expectOps(t, st.OperationLog, "delete t/route", "delete t/if")

	cur.Put(ext("link", "eth0").with("up"))
	st = r.Reconcile(ctx, cur, intended)
	expectOps(t, st.OperationLog, "create t/if", "create t/route")

	cur.Delete(ref("link/eth0")) // disappears
	st = r.Reconcile(ctx, cur, intended)
	expectOps(t, st.OperationLog, "delete t/route", "delete t/if")
	if _, ok := cur.Get(ref("t/if")); ok {
		t.Fatal("withdrawn item still in the current state")
	}
	if st.Blocked[ref("t/route")] != "blocked: waiting for t/if" {
		t.Fatalf("route blocked %q", st.Blocked[ref("t/route")])
	}
}

func TestCycleReportedRestConverges(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	intended := dg.New("intended",
		mk("t", "a", "t/b"), mk("t", "b", "t/c"), mk("t", "c", "t/a"),
		mk("t", "d", "t/a"), mk("t", "x"), mk("t", "y", "t/x"), mk("t", "self", "t/self"))
	st := r.Reconcile(ctx, nil, intended)
	expectOps(t, st.OperationLog, "create t/x", "create t/y")
	if !errors.Is(st.Err, reconciler.ErrCycle) {
		t.Fatalf("err %v", st.Err)
	}
	for _, name := range []string{"t/a", "t/b", "t/c", "t/self"} {
		if !strings.Contains(st.Err.Error(), name+": dependency cycle") {
			t.Errorf("no cycle error for %s in %v", name, st.Err)
		}
		if !strings.HasPrefix(st.Blocked[ref(name)], "blocked: dependency cycle") {
			t.Errorf("%s blocked %q", name, st.Blocked[ref(name)])
		}
	}
	if strings.Contains(st.Err.Error(), "t/d:") {
		t.Errorf("t/d is not in the cycle: %v", st.Err)
	}
	if st.Blocked[ref("t/d")] != "blocked: waiting for t/a" {
		t.Errorf("d blocked %q", st.Blocked[ref("t/d")])
	}
	// Nothing changed: the cycle stays reported without any work.
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	if !errors.Is(st.Err, reconciler.ErrCycle) || len(st.OperationLog) != 0 {
		t.Fatalf("second run: err=%v ops=%v", st.Err, st.OperationLog)
	}
	// Breaking the cycle lets the items converge.
	intended.Put(mk("t", "c"))
	intended.Delete(ref("t/self"))
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "create t/c", "create t/b", "create t/a", "create t/d")
	if st.Err != nil || len(st.Blocked) != 0 {
		t.Fatalf("err=%v blocked=%v", st.Err, st.Blocked)
	}
}

func TestMissingDependencyAndMissingConfigurator(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	intended := dg.New("intended", mk("t", "a", "t/ghost"), mk("u", "nocfg"), mk("t", "b", "u/nocfg"))
	st := r.Reconcile(ctx, nil, intended)
	if got := st.Blocked[ref("t/a")]; got != "blocked: waiting for t/ghost (not in the intended state)" {
		t.Fatalf("blocked %q", got)
	}
	if !errors.Is(st.Err, reconciler.ErrNoConfigurator) || !strings.Contains(st.Err.Error(), "create u/nocfg") {
		t.Fatalf("err %v", st.Err)
	}
	if !strings.HasPrefix(st.Blocked[ref("t/b")], "blocked: waiting for u/nocfg (failed: ") {
		t.Fatalf("b blocked %q", st.Blocked[ref("t/b")])
	}
}

func TestRetryFailedCreateWithSameIntent(t *testing.T) {
	rec := newRecorder()
	boom := errors.New("device busy")
	rec.fail["create t/a"] = boom
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	r := reconciler.New(registry(rec, "t"), reconciler.WithClock(func() time.Time { return now }))
	intended := dg.New("intended", mk("t", "a"), mk("t", "b", "t/a"))
	st := r.Reconcile(ctx, nil, intended)
	expectOps(t, st.OperationLog, "create t/a (failed)")
	if !errors.Is(st.Err, boom) || !strings.Contains(st.Err.Error(), "create t/a: device busy") {
		t.Fatalf("err %v", st.Err)
	}
	s, _ := st.NewCurrentState.State(ref("t/a"))
	if s.State != dg.StateFailed || s.LastErr != boom || !s.Since.Equal(now) {
		t.Fatalf("state %+v", s)
	}
	if f, ok := r.Records().Failure(ref("t/a")); !ok || f.Count != 1 || !f.At.Equal(now) || f.Op != reconciler.OpCreate {
		t.Fatalf("failure record %+v %v", f, ok)
	}
	delete(rec.fail, "create t/a")
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "create t/a", "create t/b")
	if st.OperationLog[0].PrevErr != boom {
		t.Fatalf("prev err %v", st.OperationLog[0].PrevErr)
	}
}

func TestNothingChangedDoesNothing(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	intended := dg.New("intended", mk("t", "a"), mk("t", "b", "t/a"))
	st := r.Reconcile(ctx, nil, intended)
	rec.Calls()
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	if len(st.OperationLog) != 0 || len(rec.Calls()) != 0 {
		t.Fatal("a reconcile with nothing changed ran operations")
	}
}

func TestDeleteOrderAndIntendedNil(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	intended := dg.New("intended", mk("t", "a"), mk("t", "b", "t/a"), mk("t", "c", "t/b"))
	st := r.Reconcile(ctx, nil, intended)
	st = r.Reconcile(ctx, st.NewCurrentState, nil)
	expectOps(t, st.OperationLog, "delete t/c", "delete t/b", "delete t/a")
	if st.NewCurrentState.Len() != 0 {
		t.Fatal("current state not empty")
	}
}

func TestModifyAwayBeforeDeletingOldDependency(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	intended := dg.New("intended", mk("t", "eth0"), mk("t", "eth1"), mk("t", "route", "t/eth0"))
	st := r.Reconcile(ctx, nil, intended)
	intended.Delete(ref("t/eth0"))
	intended.Put(mk("t", "route", "t/eth1"))
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "modify t/route", "delete t/eth0")
}

func TestSubgraphOnlyReconcile(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	intended := dg.New("intended")
	intended.EditSubGraph("net").Put(mk("t", "a"))
	intended.EditSubGraph("fw").Put(mk("t", "chain"))
	st := r.Reconcile(ctx, nil, intended.SubGraph("net"))
	expectOps(t, st.OperationLog, "create t/a")
	cur := st.NewCurrentState
	if p, _ := cur.ScopeOf(ref("t/a")); p != "net" {
		t.Fatalf("created in subgraph %q", p)
	}
	st = r.Reconcile(ctx, cur, intended.SubGraph("fw"))
	expectOps(t, st.OperationLog, "create t/chain")
	// Removing the net subgraph's item, reconciling only fw: a stays.
	intended.SubGraph("net").Delete(ref("t/a"))
	st = r.Reconcile(ctx, cur, intended.SubGraph("fw"))
	expectOps(t, st.OperationLog)
	st = r.Reconcile(ctx, cur, intended.SubGraph("net"))
	expectOps(t, st.OperationLog, "delete t/a")
	// A single item as a subgraph.
	intended.SubGraph("fw").Put(mk("t", "chain").with("v2"))
	intended.SubGraph("fw").Put(mk("t", "chain2"))
	st = r.Reconcile(ctx, cur, intended.ItemAsSubGraph(ref("t/chain2")))
	expectOps(t, st.OperationLog, "create t/chain2")
}

func TestCancelAndResumeWithFreshReconciler(t *testing.T) {
	rec := newRecorder()
	records := reconciler.NewRecords()            // the caller's: each new Reconciler continues from them
	rec.async["create t/slow"] = make(chan error) // never released
	rec.async["create t/slow2"] = make(chan error)
	intended := dg.New("intended", mk("t", "slow"), mk("t", "slow2"), mk("t", "after", "t/slow"), mk("t", "free"))
	st := reconciler.New(registry(rec, "t"), reconciler.WithRecords(records)).Reconcile(ctx, nil, intended)
	expectOps(t, st.OperationLog, "create t/slow (in progress)", "create t/slow2 (in progress)", "create t/free")
	st.CancelAsyncOps(func(r dg.ItemRef) bool { return r.Name == "slow" })
	select {
	case <-st.ReadyToResume:
	case <-time.After(5 * time.Second):
		t.Fatal("no resume after cancel")
	}
	delete(rec.async, "create t/slow")
	st = reconciler.New(registry(rec, "t"), reconciler.WithRecords(records)).Reconcile(ctx, st.NewCurrentState, intended)
	// The canceled create failed; slow2 still runs. The failure is retried
	// by the next Reconcile, not by this one.
	expectOps(t, st.OperationLog, "create t/slow (failed)")
	if !st.AsyncOpsInProgress {
		t.Fatal("slow2 should still be in progress")
	}
	st.CancelAsyncOps(nil)
	st.WaitForAsyncOps()
	st = reconciler.New(registry(rec, "t"), reconciler.WithRecords(records)).Reconcile(ctx, st.NewCurrentState, intended)
	delete(rec.async, "create t/slow2")
	st = reconciler.New(registry(rec, "t"), reconciler.WithRecords(records)).Reconcile(ctx, st.NewCurrentState, intended)
	if st.Err != nil || st.NewCurrentState.Len() != 4 {
		t.Fatalf("err=%v len=%d log=%v", st.Err, st.NewCurrentState.Len(), st.OperationLog)
	}
}

func TestAsyncDoesNotStallUnrelatedItems(t *testing.T) {
	rec := newRecorder()
	records := reconciler.NewRecords() // the caller's: each new Reconciler continues from them
	release := make(chan error, 1)
	rec.async["create t/a"] = release
	intended := dg.New("intended", mk("t", "a"), mk("t", "a2", "t/a"), mk("t", "b"), mk("t", "b2", "t/b"))
	st := reconciler.New(registry(rec, "t"), reconciler.WithRecords(records)).Reconcile(ctx, nil, intended)
	expectOps(t, st.OperationLog, "create t/a (in progress)", "create t/b", "create t/b2")
	release <- nil
	<-st.ReadyToResume
	st = reconciler.New(registry(rec, "t"), reconciler.WithRecords(records)).Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "create t/a", "create t/a2")
}

func TestPlanMatchesReconcileAndChangesNothing(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	intended := dg.New("intended", mk("t", "if"), mk("t", "addr", "t/if"), mk("t", "x"))
	st := r.Reconcile(ctx, nil, intended)
	cur := st.NewCurrentState
	rec.Calls()
	intended.Put(mk("t", "if").fixed("new"))
	intended.Delete(ref("t/x"))
	intended.Put(mk("t", "y"))
	plan := r.Plan(ctx, cur, intended)
	if len(rec.Calls()) != 0 {
		t.Fatal("plan called a configurator")
	}
	if cur.Len() != 3 {
		t.Fatal("plan changed the current state")
	}
	st = r.Reconcile(ctx, cur, intended)
	if !slices.Equal(opsOf(plan.OperationLog), opsOf(st.OperationLog)) {
		t.Fatalf("plan %v\nreal %v", opsOf(plan.OperationLog), opsOf(st.OperationLog))
	}
	if len(st.OperationLog) != 6 {
		t.Fatalf("ops %v", opsOf(st.OperationLog))
	}
}

type batcher struct {
	*recorder
	batches [][]string
}

func (b *batcher) ApplyBatch(_ context.Context, ops []reconciler.BatchOp) []error {
	var names []string
	for _, op := range ops {
		it := op.New
		if it == nil {
			it = op.Old
		}
		names = append(names, op.Op.String()+" "+dg.Ref(it).String())
	}
	b.batches = append(b.batches, names)
	return make([]error, len(ops))
}

func TestBatchingReadyIndependentOps(t *testing.T) {
	b := &batcher{recorder: newRecorder()}
	reg := &reconciler.TypeRegistry{}
	reg.Register("route", b)
	reg.Register("if", newRecorder())
	intended := dg.New("intended", mk("if", "eth0"),
		mk("route", "r1", "if/eth0"), mk("route", "r2", "if/eth0"), mk("route", "r3", "if/eth0"))
	st := reconciler.New(reg).Reconcile(ctx, nil, intended)
	if st.Err != nil {
		t.Fatal(st.Err)
	}
	if len(b.batches) != 1 || len(b.batches[0]) != 3 {
		t.Fatalf("batches %v", b.batches)
	}
	expectOps(t, st.OperationLog, "create if/eth0", "create route/r1", "create route/r2", "create route/r3")
}
