package agent

import (
	"context"
	"io"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/source"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// statusNotifier reports every reconcile's status line (Notifier.Status)
// on a channel, dropping what the reader is not waiting for.
type statusNotifier struct {
	nopNotifier
	c chan struct{}
}

func (n statusNotifier) Status(string) error {
	select {
	case n.c <- struct{}{}:
	default:
	}
	return nil
}

// BenchmarkDaemonRouteEdit is issue 10's daemon edit in process: the loop
// over a fake kernel (a real reconciler; writes go to a map) with a state
// directory holds 100k routes from one file; each iteration replaces the
// file's extra route (a file renamed into place) and waits until the
// reconcile after it has written the new route. The quiet period (the
// settle window of a renamed file, 20 ms) is included; the drift checks
// are off (their cost comes 1 s later, see test/netns's
// BenchmarkDaemonEditRoutes). cpu-ns/op is the process's CPU time.
//
//	go test -run '^$' -bench BenchmarkDaemonRouteEdit -benchtime 20x ./agent/
func BenchmarkDaemonRouteEdit(b *testing.B) {
	const n = 100_000
	k := newFakeKernel(uplink(2, true))
	src := newFakeSource("dir:bench", map[string]string{"r.json": string(routesFile(n, 0))})
	log := logrus.New()
	log.SetOutput(io.Discard)
	log.SetLevel(logrus.WarnLevel)
	notify := statusNotifier{c: make(chan struct{}, 1)}
	a, err := New(Config{Kernel: k, Log: log, Sources: []source.IntentSource{src}, Notifier: notify,
		StateDir: b.TempDir(), DriftInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			b.Error(err)
		}
	}()
	await := func(extra int) {
		ref := dg.Ref(&items.Route{Dst: netip.PrefixFrom(netip.AddrFrom4([4]byte{172, 16, byte(extra / 256), byte(extra % 256)}), 32), Table: 100})
		deadline := time.After(2 * time.Minute)
		for !k.has(ref) {
			select {
			case <-notify.c:
			case <-deadline:
				b.Fatalf("%s not written", ref)
			}
		}
	}
	await(0)
	docs := make([]string, b.N+1)
	for i := 1; i <= b.N; i++ {
		docs[i] = string(routesFile(n, i))
	}
	took := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 1; i <= b.N; i++ {
		start := time.Now()
		src.setRenamed("r.json", docs[i])
		await(i)
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
}
