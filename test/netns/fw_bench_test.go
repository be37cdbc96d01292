package netns_test

import (
	"fmt"
	"testing"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// fwNoBatch hides ApplyBatch, so that the reconciler calls Create and
// Delete one chain at a time.
type fwNoBatch struct{ reconciler.Configurator }

// fwBenchIntent is nChains IPv4 filter chains of nRules rules each, jumped
// to from FORWARD.
func fwBenchIntent(nChains, nRules int) *dg.Graph {
	g := dg.New("intent")
	for c := range nChains {
		ch := &items.IptablesChain{Family: items.FamilyIPv4, Table: "filter", Chain: fmt.Sprintf("NA-BENCH%04d", c),
			JumpFrom: "FORWARD", Position: c + 1}
		for r := range nRules {
			ch.Rules = append(ch.Rules, []string{"-s", fmt.Sprintf("10.%d.%d.0/24", c%250, r%250),
				"-p", "tcp", "--dport", fmt.Sprint(1000 + r), "-j", "ACCEPT"})
		}
		g.Put(ch)
	}
	return g
}

// BenchmarkFwChains creates chains from nothing through the reconciler,
// one restore per chain versus one per table (ApplyBatch); the deletes
// between iterations are not timed.
//
//	go test -run '^$' -bench BenchmarkFwChains -benchtime 3x -count 5 ./test/netns/
func BenchmarkFwChains(b *testing.B) {
	for _, size := range []struct{ chains, rules int }{{100, 100}, {20, 500}} {
		for _, batched := range []bool{false, true} {
			mode := "one-by-one"
			if batched {
				mode = "batched"
			}
			b.Run(fmt.Sprintf("%dx%d/%s", size.chains, size.rules, mode), func(b *testing.B) {
				fwBenchCreate(b, size.chains, size.rules, batched)
			})
		}
	}
}

func fwBenchCreate(b *testing.B, nChains, nRules int, batched bool) {
	e := fwNewEnv(b)
	reg := e.reg
	if !batched {
		cfg := e.reg.Configurator(&items.IptablesChain{})
		reg = &reconciler.TypeRegistry{}
		if err := reg.Register(items.TypeIptablesChain, fwNoBatch{cfg}); err != nil {
			b.Fatal(err)
		}
	}
	intended := fwBenchIntent(nChains, nRules)
	for i := 0; i < b.N; i++ {
		st := reconciler.New(reg).Reconcile(e.ctx, nil, intended)
		b.StopTimer()
		if st.Err != nil || len(st.OperationLog) != nChains {
			b.Fatalf("create: %v, %d ops", st.Err, len(st.OperationLog))
		}
		if st := reconciler.New(reg).Reconcile(e.ctx, st.NewCurrentState, nil); st.Err != nil {
			b.Fatalf("delete: %v", st.Err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(nChains*nRules)*float64(b.N)/b.Elapsed().Seconds(), "rules/s")
}
