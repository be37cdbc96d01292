package reconciler_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// uplink is a host's uplink as the renderer models it: an interface, an
// address on it and a default route through a gateway in the address's
// subnet (so the route depends on the address).
func uplink(addr, route string) *dg.Graph {
	return dg.New("intended",
		mk("interface", "eth0"),
		mk("address", addr, "interface/eth0"),
		mk("route", route, "interface/eth0", "address/"+addr),
	)
}

func uplinkRegistry(c reconciler.Configurator) *reconciler.TypeRegistry {
	return registry(c, "interface", "address", "route")
}

// Replacing the default route by one with another metric (another item:
// the kernel keys routes by metric, so both can exist) creates the new one
// before it deletes the old one, in Plan and Reconcile alike.
func TestMakeBeforeBreakNewRouteBeforeOldGoes(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(uplinkRegistry(rec))
	intended := uplink("192.0.2.10/24", "default metric 100")
	st := r.Reconcile(ctx, nil, intended)
	intended.Delete(ref("route/default metric 100"))
	intended.Put(mk("route", "default metric 200", "interface/eth0", "address/192.0.2.10/24"))

	want := []string{"create route/default metric 200", "delete route/default metric 100"}
	plan := r.Plan(ctx, st.NewCurrentState, intended)
	expectOps(t, plan.OperationLog, want...)
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, want...)
	for _, e := range st.OperationLog {
		if e.Recreate {
			t.Fatalf("%s marked as a recreate", e)
		}
	}
}

// A new address on the uplink: the new address is added first, the default
// route moves to it by a modify (it is never deleted), and the old address
// goes last.
func TestMakeBeforeBreakDependantMovesToNewItem(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(uplinkRegistry(rec))
	st := r.Reconcile(ctx, nil, uplink("192.0.2.10/24", "default"))
	intended := uplink("192.0.2.11/24", "default")

	want := []string{"create address/192.0.2.11/24", "modify route/default", "delete address/192.0.2.10/24"}
	plan := r.Plan(ctx, st.NewCurrentState, intended)
	expectOps(t, plan.OperationLog, want...)
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, want...)
	if st.Err != nil || len(st.Blocked) != 0 {
		t.Fatalf("err=%v blocked=%v", st.Err, st.Blocked)
	}
}

// Two items the system cannot hold at once (an IPv6 address under another
// prefix length): the old one is deleted first, with what depends on it
// and cannot move, and the new one is created after.
func TestConflictingItemsAreDeletedFirst(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(uplinkRegistry(rec))
	old := mk("address", "2001:db8::1/64", "interface/eth0").conflicting("address eth0 2001:db8::1")
	intended := dg.New("intended", mk("interface", "eth0"), old,
		mk("route", "default", "address/2001:db8::1/64"), mk("route", "other metric 1"))
	st := r.Reconcile(ctx, nil, intended)

	intended.Delete(dg.Ref(old))
	intended.Put(mk("address", "2001:db8::1/56", "interface/eth0").conflicting("address eth0 2001:db8::1"))
	intended.Put(mk("route", "default", "address/2001:db8::1/56"))
	intended.Delete(ref("route/other metric 1"))
	intended.Put(mk("route", "other metric 2"))

	want := []string{
		"delete route/default",          // it cannot move to the new address yet
		"create route/other metric 2",   // make before break where there is no conflict
		"delete address/2001:db8::1/64", // conflicts: deleted first
		"create address/2001:db8::1/56", "create route/default",
		"delete route/other metric 1",
	}
	plan := r.Plan(ctx, st.NewCurrentState, intended)
	expectOps(t, plan.OperationLog, want...)
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, want...)
	if st.Err != nil || len(st.Blocked) != 0 {
		t.Fatalf("err=%v blocked=%v", st.Err, st.Blocked)
	}
}

// A conflicting old item whose delete fails blocks the new one, with the
// reason; the next run retries the delete and then creates.
func TestConflictFailedDeleteBlocksNewItem(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	intended := dg.New("intended", mk("t", "a/64").conflicting("a"))
	st := r.Reconcile(ctx, nil, intended)
	intended.Delete(ref("t/a/64"))
	intended.Put(mk("t", "a/56").conflicting("a"))
	rec.fail["delete t/a/64"] = errors.New("busy")
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "delete t/a/64 (failed)")
	if got := st.Blocked[ref("t/a/56")]; !strings.Contains(got, "waiting for t/a/64 to be deleted") || !strings.Contains(got, "busy") {
		t.Fatalf("blocked reason %q", got)
	}
	delete(rec.fail, "delete t/a/64")
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "delete t/a/64", "create t/a/56")
	if st.Err != nil || len(st.Blocked) != 0 {
		t.Fatalf("err=%v blocked=%v", st.Err, st.Blocked)
	}
}

// A recreate cascade still deletes first (the item is the same), while an
// unrelated replacement in the same run is made before it breaks, and an
// unwanted item that depends on the recreated one goes with the cascade.
func TestMakeBeforeBreakWithRecreateCascade(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	intended := dg.New("intended",
		mk("t", "if"), mk("t", "addr", "t/if"), mk("t", "route", "t/addr"), mk("t", "old-on-if", "t/if"),
		mk("t", "eth1"), mk("t", "r100", "t/eth1"))
	st := r.Reconcile(ctx, nil, intended)
	intended.Put(mk("t", "if").fixed("vlan 200"))
	intended.Delete(ref("t/old-on-if"))
	intended.Delete(ref("t/r100"))
	intended.Put(mk("t", "r200", "t/eth1"))

	want := []string{
		"delete t/old-on-if", "delete t/route", "create t/r200", "delete t/addr", "delete t/if",
		"create t/if", "create t/addr", "create t/route",
		"delete t/r100",
	}
	plan := r.Plan(ctx, st.NewCurrentState, intended)
	expectOps(t, plan.OperationLog, want...)
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, want...)
	for _, e := range st.OperationLog {
		if e.Recreate != (e.Ref.Name == "if" || e.Ref.Name == "addr" || e.Ref.Name == "route") {
			t.Fatalf("%s: recreate mark %v", e, e.Recreate)
		}
	}
}

// Unwanted items still go leaves first, after the new items are made.
func TestMakeBeforeBreakDeletesDependantsFirst(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	intended := dg.New("intended", mk("t", "br0"), mk("t", "br0-addr", "t/br0"), mk("t", "br0-route", "t/br0-addr"))
	st := r.Reconcile(ctx, nil, intended)
	intended = dg.New("intended", mk("t", "br1"), mk("t", "br1-addr", "t/br1"), mk("t", "br1-route", "t/br1-addr"))
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog,
		"create t/br1", "create t/br1-addr", "create t/br1-route",
		"delete t/br0-route", "delete t/br0-addr", "delete t/br0")
}

// While the new item is created in the background, the old one stays; it
// goes in the run that follows the end of the create.
func TestMakeBeforeBreakWaitsForAsyncCreate(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	intended := dg.New("intended", mk("t", "old"), mk("t", "unrelated"))
	st := r.Reconcile(ctx, nil, intended)
	release := make(chan error)
	rec.async["create t/new"] = release
	intended.Delete(ref("t/old"))
	intended.Put(mk("t", "new"))
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "create t/new (in progress)")

	intended.Put(mk("t", "unrelated").with("v2")) // a run meanwhile does not delete t/old
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "modify t/unrelated")

	release <- nil
	select {
	case <-st.ReadyToResume:
	case <-time.After(5 * time.Second):
		t.Fatal("ReadyToResume never fired")
	}
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "create t/new", "delete t/old")
}

// A failed delete of an item no longer wanted is reported, is not retried
// in the same run, and is retried (and done) by the next.
func TestMakeBeforeBreakFailedDeleteRetried(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	intended := dg.New("intended", mk("t", "a"), mk("t", "b", "t/a"), mk("t", "c"))
	st := r.Reconcile(ctx, nil, intended)
	rec.fail["delete t/a"] = errors.New("busy")
	intended = dg.New("intended", mk("t", "c").with("v2"), mk("t", "d"))
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "modify t/c", "create t/d", "delete t/b", "delete t/a (failed)")
	if st.Err == nil {
		t.Fatal("no error for the failed delete")
	}
	delete(rec.fail, "delete t/a")
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "delete t/a")
	if st.Err != nil || st.NewCurrentState.Len() != 2 {
		t.Fatalf("err=%v len=%d", st.Err, st.NewCurrentState.Len())
	}
}

// A replacement the system refuses does not take the old item with it:
// the old default route stays (Status.Held says why) while the new one
// fails, and goes in the run where the new one is made. A failure of
// another type holds nothing back.
func TestMakeBeforeBreakFailedMakeHoldsOldItem(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(uplinkRegistry(rec))
	st := r.Reconcile(ctx, nil, uplink("192.0.2.10/24", "default metric 100"))
	intended := uplink("192.0.2.10/24", "default metric 200")
	rec.fail["create route/default metric 200"] = errors.New("network unreachable")

	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "create route/default metric 200 (failed)")
	old := ref("route/default metric 100")
	if _, ok := st.NewCurrentState.Get(old); !ok {
		t.Fatal("the old default route was deleted although its replacement failed")
	}
	if why := st.Held[old]; !strings.Contains(why, "route/default metric 200") {
		t.Errorf("Held[%s] = %q, want the failed route named", old, why)
	}

	delete(rec.fail, "create route/default metric 200")
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "create route/default metric 200", "delete route/default metric 100")
	if len(st.Held) != 0 || st.Err != nil {
		t.Errorf("held %v, err %v", st.Held, st.Err)
	}

	// A failed address does not hold back a route no longer wanted.
	intended = dg.New("intended",
		mk("interface", "eth0"),
		mk("address", "192.0.2.10/24", "interface/eth0"),
		mk("address", "192.0.2.99/24", "interface/eth0"),
	)
	rec.fail["create address/192.0.2.99/24"] = errors.New("refused")
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "create address/192.0.2.99/24 (failed)", "delete route/default metric 200")
	if len(st.Held) != 0 {
		t.Errorf("held %v", st.Held)
	}
}

// The delete of a conflicting item that continues in the background: the
// new item waits for it across runs and is created in the run that sees
// the delete done.
func TestConflictWaitsForAsyncDelete(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	intended := dg.New("intended", mk("t", "old").conflicting("K"))
	st := r.Reconcile(ctx, nil, intended)
	release := make(chan error)
	rec.async["delete t/old"] = release
	intended = dg.New("intended", mk("t", "new").conflicting("K"))
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "delete t/old (in progress)")

	release <- nil
	select {
	case <-st.ReadyToResume:
	case <-time.After(5 * time.Second):
		t.Fatal("ReadyToResume never fired")
	}
	st = r.Reconcile(ctx, st.NewCurrentState, intended)
	expectOps(t, st.OperationLog, "delete t/old", "create t/new")
	if _, ok := st.NewCurrentState.Get(ref("t/new")); !ok || st.Err != nil {
		t.Fatalf("t/new not created: err %v, blocked %v", st.Err, st.Blocked)
	}
}
