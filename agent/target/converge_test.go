package target

import (
	"context"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// fakeKernel is a Backend over a map of items: a reconcile writes every
// intended item that differs (undoing, once, the first write of each item
// in undo: a side effect of another change), and a read-back returns a
// new graph of what it holds.
type fakeKernel struct {
	held       map[dg.ItemRef]dg.Item
	undo       map[dg.ItemRef]dg.Item // written, the kernel puts this back once
	reads      int
	reconciles int
}

func (k *fakeKernel) ReadCurrent(context.Context, *dg.Graph) (*dg.Graph, error) {
	k.reads++
	g := dg.New("kernel")
	for _, it := range k.held {
		g.PutWithState(it, dg.StateData{State: dg.StateCreated})
	}
	return g, nil
}

func (k *fakeKernel) Reconcile(_ context.Context, _ *reconciler.Records, cur, intended *dg.Graph) reconciler.Status {
	k.reconciles++
	var log reconciler.OperationLog
	for it := range intended.Items() {
		ref := dg.Ref(it)
		if have, ok := cur.Get(ref); ok && have.Equal(it) {
			continue
		}
		k.held[ref] = it
		if old, ok := k.undo[ref]; ok {
			k.held[ref] = old
			delete(k.undo, ref)
		}
		cur.PutWithState(it, dg.StateData{State: dg.StateCreated})
		log = append(log, reconciler.OpLogEntry{Ref: ref, Item: it, Op: reconciler.OpCreate})
	}
	return reconciler.Status{OperationLog: log, NewCurrentState: cur}
}

// A pass that wrote is followed by a read-back; when it finds what the
// pass left, Converge returns without another reconcile, with that
// read-back as the current state. When it finds a change undone, another
// pass writes it again.
func TestConvergeConfirmsByReadBack(t *testing.T) {
	fwd := &items.Sysctl{Key: "net/ipv4/ip_forward", Value: "1"}
	mtu := &items.Sysctl{Key: "net/ipv6/conf/eth0/mtu", Value: "9000"}
	intended := dg.New("intended", fwd, mtu)

	k := &fakeKernel{held: map[dg.ItemRef]dg.Item{}}
	res, err := Converge(context.Background(), k, intended)
	if err != nil || !res.Converged() || len(res.Ops) != 2 {
		t.Fatalf("kept: %v, %+v", err, res)
	}
	if k.reads != 2 || k.reconciles != 1 {
		t.Errorf("kept: %d read-backs and %d reconciles, want 2 and 1", k.reads, k.reconciles)
	}
	if got, _ := res.Current.Get(dg.Ref(mtu)); got != dg.Item(mtu) || res.Current.Len() != 2 || res.Current.Name() != "kernel" {
		t.Errorf("kept: current is not the last read-back: %v, %d items", got, res.Current.Len())
	}

	k = &fakeKernel{held: map[dg.ItemRef]dg.Item{}, undo: map[dg.ItemRef]dg.Item{
		dg.Ref(mtu): &items.Sysctl{Key: mtu.Key, Value: "1500"}}}
	res, err = Converge(context.Background(), k, intended)
	if err != nil || !res.Converged() || len(res.Ops) != 3 {
		t.Fatalf("undone once: %v, %+v", err, res)
	}
	if k.reads != 3 || k.reconciles != 2 {
		t.Errorf("undone once: %d read-backs and %d reconciles, want 3 and 2", k.reads, k.reconciles)
	}
	if got, _ := k.held[dg.Ref(mtu)]; got != dg.Item(mtu) {
		t.Errorf("undone once: the kernel holds %v", got)
	}
}
