package reconciler_test

import (
	"fmt"
	"runtime"
	"testing"
	"weak"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// TestReplacedCurrentIsCollectable: once a run is over, neither the
// intended graph nor the reconciler keeps the current graph it was given
// alive. A daemon that replaces its current graph with a fresh read-back
// must not hold the previous one (a whole graph generation) until a run
// happens to look at every item again.
func TestReplacedCurrentIsCollectable(t *testing.T) {
	rec := newRecorder()
	r := reconciler.New(registry(rec, "t"))
	var items []dg.Item
	items = append(items, mk("t", "i0"))
	for i := 1; i < 50; i++ {
		items = append(items, mk("t", fmt.Sprint("i", i), "t/i0"))
	}
	intended := dg.New("intended", items...)
	current := dg.New("current")
	st := r.Reconcile(ctx, current, intended)
	if len(st.OperationLog) != 50 {
		t.Fatalf("first run: %d operations, want 50", len(st.OperationLog))
	}
	// A node of the current graph: the graph's nodes, its index and its
	// root stay alive as long as any of them is reachable.
	old := weak.Make(current.Node(ref("t/i7")))
	if old.Value() == nil {
		t.Fatal("the current graph has no t/i7")
	}
	// The caller replaces its current graph with a fresh copy (a read-back)
	// and waits for the next event.
	current = current.Root().Clone()
	runtime.GC()
	runtime.GC()
	if old.Value() != nil {
		t.Fatal("the replaced current graph is still reachable before the next run")
	}
	if st := r.Reconcile(ctx, current, intended); len(st.OperationLog) != 0 {
		t.Fatalf("second run: %d operations, want 0", len(st.OperationLog))
	}
	runtime.KeepAlive(intended)
	runtime.KeepAlive(current)
	runtime.KeepAlive(r)
}
