//go:build !vmtest

package netns_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/host"
	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/testns"
)

// BenchmarkTrialRoutes compares a plain apply of 100k routes with the
// same apply as a trial (the trial record, and the before-image journal
// fsynced before every wave), confirmed at the end. The two alternate in
// one namespace, so that both see the same load; emptying the namespace
// between them is not timed. It reports the median of each and their
// ratio (the target: a trial costs at most 1.2× a plain apply).
//
//	go test -run '^$' -bench BenchmarkTrialRoutes -benchtime 5x ./test/netns/
func BenchmarkTrialRoutes(b *testing.B) {
	const n = 100000
	tgt := testns.New(b)
	testns.Exec(b, tgt, "ip", "link", "add", "uplink0", "type", "veth", "peer", "name", "uplink0-peer")
	testns.Exec(b, tgt, "ip", "link", "set", "uplink0", "up")
	testns.Exec(b, tgt, "ip", "link", "set", "uplink0-peer", "up")
	log := logrus.New()
	log.SetOutput(io.Discard)
	rt, err := host.Open(tgt.Name, b.TempDir(), log)
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	var routes []string
	for i := range n {
		routes = append(routes, fmt.Sprintf(`{"to": "10.%d.%d.%d/28", "via": "192.0.2.1", "table": 100}`, i/4096, i/16%256, i%16*16))
	}
	files := map[string][]byte{"bench.json": []byte(`{"version": 1,
  "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]}],
  "routes": [` + strings.Join(routes, ",") + `]}`)}
	intended, err := render.Load(files)
	if err != nil {
		b.Fatal(err)
	}
	empty, err := render.Load(map[string][]byte{"empty.json": []byte(`{"version": 1}`)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	apply := func(g *dg.Graph) {
		if res, err := rt.Apply(ctx, g, host.ApplyOptions{}); err != nil || !res.Converged() {
			b.Fatalf("apply: %v %v", err, res.Problems)
		}
	}
	var plain, trial []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		apply(intended)
		plain = append(plain, time.Since(start))
		b.StopTimer()
		apply(empty)
		b.StartTimer()

		start = time.Now()
		tr, err := rt.BeginTrial(host.Trial{Started: start, Deadline: start.Add(time.Minute), Files: files})
		if err != nil {
			b.Fatal(err)
		}
		apply(intended)
		if err := tr.Confirm(); err != nil {
			b.Fatal(err)
		}
		trial = append(trial, time.Since(start))
		b.StopTimer()
		apply(empty)
		b.StartTimer()
	}
	mp, mt := median(plain), median(trial)
	b.ReportMetric(mp.Seconds(), "apply-s")
	b.ReportMetric(mt.Seconds(), "trial-s")
	b.ReportMetric(float64(mt)/float64(mp), "trial/apply")
	b.Logf("apply %v, trial %v", plain, trial)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
