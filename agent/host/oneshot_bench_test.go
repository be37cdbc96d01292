package host

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/intent"
	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/testns"
	"github.com/netagent/netagent/reconciler"
)

// The one-shot CLI's work at 100k routes (issue 10), as in
// scripts/bench.sh's routes row: uplink0 (one end of an up veth pair, with
// 192.0.2.10/24) and n IPv4 /24 routes via 192.0.2.1 over it.
const oneShotRoutes = 100000

// oneShotWork returns a Runtime on a fresh namespace with uplink0, and the
// intended graph of n routes rendered from the intent benchgen writes.
// With loaded, the kernel already holds them (applied once).
func oneShotWork(b *testing.B, n int, loaded bool) (*Runtime, *dg.Graph) {
	b.Helper()
	tgt := testns.New(b)
	dir := b.TempDir()
	setup := "link add uplink0 type veth peer name uplink0-peer\nlink set uplink0-peer up\nlink set uplink0 up\n"
	batch := filepath.Join(dir, "setup.batch")
	if err := os.WriteFile(batch, []byte(setup), 0o600); err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command("ip", "-n", tgt.Name, "-batch", batch).CombinedOutput(); err != nil {
		b.Fatalf("ip -batch: %v: %s", err, out)
	}
	intended := oneShotIntended(b, n)
	log := logrus.New()
	log.SetOutput(io.Discard)
	log.SetLevel(logrus.WarnLevel) // as scripts/bench.sh runs it
	rt, err := Open(tgt.Name, filepath.Join(dir, "state"), log)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(rt.Close)
	if loaded {
		res, err := rt.Apply(context.Background(), intended, ApplyOptions{})
		if err != nil || !res.Converged() {
			b.Fatalf("loading: %v, %d problems", err, len(res.Problems))
		}
	}
	return rt, intended
}

// oneShotIntended renders the intent benchgen writes for n routes:
// uplink0 with 192.0.2.10/24 and n IPv4 /24 routes via 192.0.2.1 over it.
func oneShotIntended(b *testing.B, n int) *dg.Graph {
	b.Helper()
	var doc strings.Builder
	doc.WriteString(`{"version":1,"interfaces":[{"name":"uplink0","type":"physical","addresses":["192.0.2.10/24"]}],"routes":[`)
	for i := range n {
		if i > 0 {
			doc.WriteByte(',')
		}
		fmt.Fprintf(&doc, `{"to":"%d.%d.%d.0/24","via":"192.0.2.1","dev":"uplink0"}`, 10+i>>16, i>>8&255, i&255)
	}
	doc.WriteString("]}")
	in, err := intent.Parse([]byte(doc.String()))
	if err != nil {
		b.Fatal(err)
	}
	intended, err := render.Render(in)
	if err != nil {
		b.Fatal(err)
	}
	return intended
}

// BenchmarkOneShot100k times what `netagent apply` and `check` do after
// the intent is rendered: an apply that finds nothing to do (noop), a
// check, the read-back alone, and an initial apply into an empty
// namespace (the routes are flushed outside the timer).
func BenchmarkOneShot100k(b *testing.B) {
	ctx := context.Background()
	b.Run("noop", func(b *testing.B) {
		rt, intended := oneShotWork(b, oneShotRoutes, true)
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			res, err := rt.Apply(ctx, intended, ApplyOptions{})
			if err != nil || !res.Converged() || len(res.Ops) != 0 {
				b.Fatalf("apply: %v, %d ops, %d problems", err, len(res.Ops), len(res.Problems))
			}
		}
	})
	b.Run("check", func(b *testing.B) {
		rt, intended := oneShotWork(b, oneShotRoutes, true)
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			rep, err := rt.Check(intended)
			if err != nil || !rep.Converged() {
				b.Fatalf("check: %v, %d diffs", err, len(rep.Diffs))
			}
		}
	})
	b.Run("readcurrent", func(b *testing.B) {
		rt, intended := oneShotWork(b, oneShotRoutes, true)
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			cur, err := rt.ReadCurrent(intended)
			if err != nil || cur.Len() < oneShotRoutes {
				b.Fatalf("read-back: %v, %d items", err, cur.Len())
			}
		}
	})
	b.Run("initial", func(b *testing.B) {
		rt, intended := oneShotWork(b, oneShotRoutes, false)
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			res, err := rt.Apply(ctx, intended, ApplyOptions{})
			if err != nil || !res.Converged() || len(res.Ops) != oneShotRoutes+1 {
				b.Fatalf("apply: %v, %d ops, %d problems", err, len(res.Ops), len(res.Problems))
			}
			b.StopTimer()
			flush(b, rt.Target().Name)
			b.StartTimer()
		}
	})
}

// reportCPU reports the process's CPU time (user and system, the garbage
// collector's included) per iteration, a steadier figure than wall time on
// a loaded machine; call the returned function after the loop.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// flush removes every address and route netagent put into uplink0.
func flush(b *testing.B, ns string) {
	for _, args := range [][]string{{"route", "flush", "proto", "211"}, {"addr", "flush", "dev", "uplink0"}} {
		if out, err := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
}

// BenchmarkSummarize100k is Summarize of a converged pass over 100k
// routes (the current state holds the intended items).
func BenchmarkSummarize100k(b *testing.B) {
	intended := oneShotIntended(b, oneShotRoutes)
	cur := dg.New("current")
	for it := range intended.Items() {
		cur.Put(it)
	}
	st := reconciler.Status{NewCurrentState: cur}
	b.ReportAllocs()
	for b.Loop() {
		if res := Summarize(st, intended); !res.Converged() {
			b.Fatalf("%d problems", len(res.Problems))
		}
	}
}
