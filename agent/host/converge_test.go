package host

import (
	"context"
	"fmt"
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
	never      map[dg.ItemRef]dg.Item // written, the kernel always holds this
	appear     dg.Item                // someone else's, found after the first write
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
		if held, ok := k.never[ref]; ok {
			k.held[ref] = held
		}
		if k.appear != nil {
			k.held[dg.Ref(k.appear)] = k.appear
			k.appear = nil
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

// listingKernel is fakeKernel with the read-back after a write as a list
// (as Kernel has it), listed in an order of its own.
type listingKernel struct {
	*fakeKernel
	lists int
}

func (k *listingKernel) ReadItemsAfterWrite(context.Context, *dg.Graph) ([]dg.Item, bool, error) {
	k.reads++
	k.lists++
	var list []dg.Item
	for _, it := range k.held {
		list = append(list, it)
	}
	return list, true, nil
}

// A backend that lists its read-back after a write converges exactly as
// one that returns a graph: the same operations, problems and read-backs,
// whether the kernel keeps the writes, undoes one once, or never keeps one.
func TestConvergeListedReadBackAsGraph(t *testing.T) {
	fwd := &items.Sysctl{Key: "net/ipv4/ip_forward", Value: "1"}
	mtu := &items.Sysctl{Key: "net/ipv6/conf/eth0/mtu", Value: "9000"}
	low := &items.Sysctl{Key: mtu.Key, Value: "1500"}
	foreign := &items.Sysctl{Key: "net/ipv4/conf/all/rp_filter", Value: "2"}
	cases := []struct {
		name   string
		kernel func() *fakeKernel
	}{
		{"kept", func() *fakeKernel { return &fakeKernel{held: map[dg.ItemRef]dg.Item{}} }},
		{"undone once", func() *fakeKernel {
			return &fakeKernel{held: map[dg.ItemRef]dg.Item{}, undo: map[dg.ItemRef]dg.Item{dg.Ref(mtu): low}}
		}},
		{"never kept", func() *fakeKernel {
			return &fakeKernel{held: map[dg.ItemRef]dg.Item{}, never: map[dg.ItemRef]dg.Item{dg.Ref(mtu): low}}
		}},
		{"equal, not the same", func() *fakeKernel {
			return &fakeKernel{held: map[dg.ItemRef]dg.Item{}, never: map[dg.ItemRef]dg.Item{dg.Ref(mtu): &items.Sysctl{Key: mtu.Key, Value: mtu.Value}}}
		}},
		{"found after", func() *fakeKernel {
			return &fakeKernel{held: map[dg.ItemRef]dg.Item{}, appear: foreign}
		}},
	}
	for _, c := range cases {
		intended := dg.New("intended", fwd, mtu)
		gk := c.kernel()
		want, err := Converge(context.Background(), gk, intended)
		if err != nil {
			t.Fatalf("%s: graph: %v", c.name, err)
		}
		lk := &listingKernel{fakeKernel: c.kernel()}
		got, err := Converge(context.Background(), lk, intended)
		if err != nil {
			t.Fatalf("%s: list: %v", c.name, err)
		}
		if lk.lists == 0 {
			t.Errorf("%s: the read-back after the write was not listed", c.name)
		}
		if len(got.Ops) != len(want.Ops) || lk.reads != gk.reads || lk.reconciles != gk.reconciles || got.Converged() != want.Converged() {
			t.Errorf("%s: listed: %d ops, %d read-backs, %d reconciles, converged %v; as a graph: %d, %d, %d, %v",
				c.name, len(got.Ops), lk.reads, lk.reconciles, got.Converged(), len(want.Ops), gk.reads, gk.reconciles, want.Converged())
		}
		if fmt.Sprint(got.Problems) != fmt.Sprint(want.Problems) {
			t.Errorf("%s: listed: problems %v, as a graph %v", c.name, got.Problems, want.Problems)
		}
		for _, ref := range []dg.ItemRef{dg.Ref(fwd), dg.Ref(mtu), dg.Ref(foreign)} {
			g, _ := got.Current.Get(ref)
			w, _ := want.Current.Get(ref)
			if (g == nil) != (w == nil) || g != nil && !g.Equal(w) {
				t.Errorf("%s: listed: current holds %v for %s, as a graph %v", c.name, g, ref, w)
			}
		}
	}
}

// holdsExactly finds what DiffReadBack would: a read-back that lists an
// item twice and leaves another out, lists one changed or one the writes
// did not make, or finds what a failed write left, is not as written.
func TestHoldsExactly(t *testing.T) {
	a := &items.Sysctl{Key: "net/ipv4/ip_forward", Value: "1"}
	b := &items.Sysctl{Key: "net/ipv4/conf/all/forwarding", Value: "1"}
	c := &items.Sysctl{Key: "net/ipv4/conf/all/rp_filter", Value: "2"}
	intended := dg.New("intended", a, b)
	written := func() *dg.Graph {
		g := dg.New("current")
		for _, n := range intended.Nodes() {
			n.In(g) // the peers a reconcile caches
		}
		g.PutWithState(a, dg.StateData{State: dg.StateCreated})
		g.PutWithState(b, dg.StateData{State: dg.StateCreated})
		return g
	}
	for _, tc := range []struct {
		name string
		list []dg.Item
		want bool
	}{
		{"as written", []dg.Item{a, b}, true},
		{"in another order", []dg.Item{b, a}, true},
		{"equal items", []dg.Item{&items.Sysctl{Key: a.Key, Value: "1"}, b}, true},
		{"one twice", []dg.Item{a, a}, false},
		{"one twice, then", []dg.Item{&items.Sysctl{Key: a.Key, Value: "1"}, a}, false},
		{"two copies of one", []dg.Item{&items.Sysctl{Key: a.Key, Value: "1"}, &items.Sysctl{Key: a.Key, Value: "1"}}, false},
		{"one missing", []dg.Item{a}, false},
		{"one changed", []dg.Item{a, &items.Sysctl{Key: b.Key, Value: "0"}}, false},
		{"one not written", []dg.Item{a, c}, false},
		{"one more", []dg.Item{a, b, c}, false},
	} {
		if got := holdsExactly(tc.list, written(), intended); got != tc.want {
			t.Errorf("%s: holdsExactly = %v, want %v", tc.name, got, tc.want)
		}
	}
	g := written()
	g.PutWithState(b, dg.StateData{State: dg.StateFailed})
	if holdsExactly([]dg.Item{a, b}, g, intended) {
		t.Error("a failed item: kept as written")
	}
}
