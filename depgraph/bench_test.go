package depgraph_test

import (
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

// routeGraph returns n items like a routing table's: n/100 external links
// and the rest routes, each depending on one link, in subgraph sub ("" for
// the root).
func routeGraph(n int, sub string) (*dg.Graph, []dg.Item) {
	var items []dg.Item
	links := max(n/100, 1)
	for l := range links {
		items = append(items, &item{typ: "link", name: fmt.Sprint("eth", l), external: true})
	}
	for r := range n - links {
		items = append(items, mk("route", fmt.Sprintf("main/10.%d.%d.%d/32", r>>16&255, r>>8&255, r&255), fmt.Sprint("link/eth", r%links)))
	}
	g := dg.New("g")
	into := g
	if sub != "" {
		into = g.EditSubGraph(sub)
	}
	for _, it := range items {
		into.Put(it)
	}
	return g, items
}

func BenchmarkPut(b *testing.B) {
	_, items := routeGraph(100_000, "")
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		g := dg.New("g")
		for _, it := range items {
			g.Put(it)
		}
	}
}

// BenchmarkRefs sorts the references again after one item changed.
func BenchmarkRefs(b *testing.B) {
	g, items := routeGraph(100_000, "")
	last := items[len(items)-1].(*item)
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for i := 0; b.Loop(); i++ {
		c := *last
		c.value = fmt.Sprint(i)
		g.Delete(dg.Ref(&c))
		g.Put(&c)
		if len(g.Refs()) != len(items) {
			b.Fatal("lost items")
		}
	}
}

func BenchmarkSortItemRefs(b *testing.B) {
	g, _ := routeGraph(100_000, "")
	refs := g.Refs()
	shuffled := slices.Clone(refs)
	for i := range shuffled { // a deterministic shuffle
		j := (i * 7919) % len(shuffled)
		shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
	}
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		s := slices.Clone(shuffled)
		slices.SortFunc(s, dg.ItemRef.Compare)
	}
}

// BenchmarkLookup gets every item of a subgraph with its scope, as a
// caller copying one graph into another does.
func BenchmarkLookup(b *testing.B) {
	g, items := routeGraph(100_000, "files/a.json")
	refs := make([]dg.ItemRef, len(items))
	for i, it := range items {
		refs[i] = dg.Ref(it)
	}
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		for _, ref := range refs {
			if _, ok := g.Get(ref); !ok {
				b.Fatal("missing")
			}
			if s, _ := g.ScopeOf(ref); s != "files/a.json" {
				b.Fatal("scope", s)
			}
		}
	}
}

// reportCPU reports the CPU time the process used since start (see
// cpuTime), per iteration.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
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
