package reconciler_test

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// The benchmark scenario: N items in N/10 groups. Group g has an external
// link eth<g>, an interface depending on it, 3 addresses on the interface,
// 4 routes each depending on the interface and (with a predicate) on one
// address, and 1 chain depending on the interface. Configurators are no-ops.

type noop struct{}

func (noop) Create(context.Context, dg.Item) error          { return nil }
func (noop) Modify(context.Context, dg.Item, dg.Item) error { return nil }
func (noop) Delete(context.Context, dg.Item) error          { return nil }
func (noop) NeedsRecreate(o, n dg.Item) bool                { return o.(*item).Fixed != n.(*item).Fixed }

func noopRegistry() *reconciler.TypeRegistry {
	return registry(noop{}, "interface", "address", "route", "chain")
}

func addrReady(it dg.Item) bool { return it.(*item).Value != "tentative" }

type scenario struct {
	groups   int
	links    []*item
	intended *dg.Graph
	current  *dg.Graph
	records  *reconciler.Records // the caller's, next to current
}

// reconciler returns a new Reconciler over the scenario's records, as a
// caller that keeps its records next to its current graph makes one.
func (s *scenario) reconciler() *reconciler.Reconciler {
	return reconciler.New(noopRegistry(), reconciler.WithRecords(s.records))
}

func groupItems(g int) (link *item, items []*item) {
	eth := fmt.Sprintf("eth%d", g)
	link = &item{typ: "link", name: eth, external: true, Value: "up"}
	ifc := &item{typ: "interface", name: eth, deps: []dg.Dependency{{RequiredItem: dg.ItemRef{Type: "link", Name: eth}}}}
	items = append(items, ifc)
	ifRef := dg.ItemRef{Type: "interface", Name: eth}
	var addrs []dg.ItemRef
	for a := 0; a < 3; a++ {
		ad := &item{typ: "address", name: fmt.Sprintf("%s/10.%d.%d.%d/24", eth, g>>8&255, g&255, a+1),
			deps: []dg.Dependency{{RequiredItem: ifRef}}}
		addrs = append(addrs, dg.Ref(ad))
		items = append(items, ad)
	}
	for r := 0; r < 4; r++ {
		items = append(items, &item{typ: "route", name: fmt.Sprintf("%s/r%d", eth, r), deps: []dg.Dependency{
			{RequiredItem: ifRef},
			{RequiredItem: addrs[r%3], MustSatisfy: addrReady, Description: "address ready"},
		}})
	}
	items = append(items, &item{typ: "chain", name: "NA-" + eth, deps: []dg.Dependency{{RequiredItem: ifRef}}})
	return link, items
}

func buildIntended(groups int) (*dg.Graph, []*item) {
	g := dg.New("intended")
	var links []*item
	for i := 0; i < groups; i++ {
		link, items := groupItems(i)
		links = append(links, link)
		for _, it := range items {
			g.Put(it)
		}
	}
	return g, links
}

func newScenario(b *testing.B, n int) *scenario {
	s := &scenario{groups: n / 10}
	s.intended, s.links = buildIntended(s.groups)
	s.current = s.freshCurrent()
	s.records = reconciler.NewRecords()
	st := s.reconciler().Reconcile(context.Background(), s.current, s.intended)
	if st.Err != nil || s.current.Len() != n {
		b.Fatalf("initial reconcile: err=%v len=%d want %d", st.Err, s.current.Len(), n)
	}
	runtime.GC() // do not bill the set-up's garbage to the measured loop
	return s
}

func (s *scenario) freshCurrent() *dg.Graph {
	cur := dg.New("current")
	for _, l := range s.links {
		cur.Put(l)
	}
	return cur
}

var sizes = []int{1_000, 10_000, 100_000}

func BenchmarkBuildIntended(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				buildIntended(n / 10)
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

func BenchmarkReconcile(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("a-initial/%d", n), func(b *testing.B) { benchInitial(b, n) })
		b.Run(fmt.Sprintf("b-unchanged/%d", n), func(b *testing.B) { benchUnchanged(b, n) })
		b.Run(fmt.Sprintf("c-routes1pct/%d", n), func(b *testing.B) { benchRoutes(b, n) })
		b.Run(fmt.Sprintf("d-recreate/%d", n), func(b *testing.B) { benchRecreate(b, n) })
		b.Run(fmt.Sprintf("e-linkflap/%d", n), func(b *testing.B) { benchLinkFlap(b, n) })
		b.Run(fmt.Sprintf("f-readback/%d", n), func(b *testing.B) { benchReadBack(b, n) })
	}
}

func benchInitial(b *testing.B, n int) {
	s := &scenario{groups: n / 10}
	s.intended, s.links = buildIntended(s.groups)
	b.ReportAllocs()
	var heap, before uint64
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		cur := s.freshCurrent()
		before = max(before, heapInuse()) // the previous current graph is garbage now
		b.StartTimer()
		cpu0 := cpuTime()
		st := reconciler.New(noopRegistry()).Reconcile(context.Background(), cur, s.intended)
		cpu += cpuTime() - cpu0
		if len(st.OperationLog) != n-s.groups {
			b.Fatalf("%d ops", len(st.OperationLog))
		}
		b.StopTimer()
		heap = max(heap, heapInuse())
		runtime.KeepAlive(cur)
		b.StartTimer()
	}
	b.ReportMetric(float64(heap), "heap-B")
	b.ReportMetric(float64(before), "heap-before-B")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// cpuTime returns the CPU time the process has used (all threads, the
// garbage collector's included): on a loaded machine a steadier measure of
// the work than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapInuse returns the heap in use after a collection: with both graphs
// of a scenario live, what a process holding them needs.
func heapInuse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

func benchUnchanged(b *testing.B, n int) {
	s := newScenario(b, n)
	b.ReportAllocs()
	for b.Loop() {
		st := s.reconciler().Reconcile(context.Background(), s.current, s.intended)
		if len(st.OperationLog) != 0 {
			b.Fatal("ops on an unchanged graph")
		}
	}
}

func benchRoutes(b *testing.B, n int) {
	s := newScenario(b, n)
	routes := n * 4 / 10 / 100 // 1% of the routes
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		for k := 0; k < routes; k++ {
			g := k * s.groups / routes
			it, _ := s.intended.Get(dg.ItemRef{Type: "route", Name: fmt.Sprintf("eth%d/r%d", g, k%4)})
			s.intended.Put(it.(*item).with(fmt.Sprint("metric ", i)))
		}
		b.StartTimer()
		st := s.reconciler().Reconcile(context.Background(), s.current, s.intended)
		if len(st.OperationLog) != routes {
			b.Fatalf("%d ops, want %d", len(st.OperationLog), routes)
		}
	}
}

func benchRecreate(b *testing.B, n int) {
	s := newScenario(b, n)
	ref := dg.ItemRef{Type: "interface", Name: fmt.Sprintf("eth%d", s.groups/2)}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		it, _ := s.intended.Get(ref)
		s.intended.Put(it.(*item).fixed(fmt.Sprint("kind ", i)))
		b.StartTimer()
		st := s.reconciler().Reconcile(context.Background(), s.current, s.intended)
		if len(st.OperationLog) != 18 {
			b.Fatalf("%d ops, want 18", len(st.OperationLog))
		}
	}
}

func benchLinkFlap(b *testing.B, n int) {
	s := newScenario(b, n)
	link := s.links[s.groups/2]
	b.ReportAllocs()
	for b.Loop() {
		s.current.Delete(dg.Ref(link))
		st := s.reconciler().Reconcile(context.Background(), s.current, s.intended)
		if len(st.OperationLog) != 9 {
			b.Fatalf("%d ops on link loss, want 9", len(st.OperationLog))
		}
		s.current.Put(link)
		st = s.reconciler().Reconcile(context.Background(), s.current, s.intended)
		if len(st.OperationLog) != 9 {
			b.Fatalf("%d ops on link return, want 9", len(st.OperationLog))
		}
	}
}

// benchReadBack is a no-op one-shot apply: the current state is read back
// from the system (new values, equal to the intended ones) into a new
// graph and the records are new, so the run compares every item once and
// runs no operation.
func benchReadBack(b *testing.B, n int) {
	s := &scenario{groups: n / 10}
	s.intended, s.links = buildIntended(s.groups)
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		cur := s.freshCurrent()
		for it := range s.intended.Items() {
			c := *it.(*item)
			cur.Put(&c)
		}
		runtime.GC()
		b.StartTimer()
		cpu0 := cpuTime()
		st := reconciler.New(noopRegistry()).Reconcile(context.Background(), cur, s.intended)
		cpu += cpuTime() - cpu0
		if len(st.OperationLog) != 0 || st.Err != nil {
			b.Fatalf("%d ops, err %v", len(st.OperationLog), st.Err)
		}
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}
