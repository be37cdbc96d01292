package intent

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// bigIntent returns an intent with n distinct routes (n < 1<<20) over one
// link that has an address, like issue 10's.
func bigIntent(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "addresses": ["10.0.0.1/8"]}], "routes": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		v := i * 16
		fmt.Fprintf(&b, `{"to": "172.%d.%d.%d/28", "via": "10.0.0.254", "dev": "eth0", "metric": 100}`, 16+v>>16, v>>8&255, v&255)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func BenchmarkParseValidate10kRoutes(b *testing.B)  { benchParseValidate(b, 10_000) }
func BenchmarkParseValidate100kRoutes(b *testing.B) { benchParseValidate(b, 100_000) }

// benchParseValidate parses and validates an intent of n routes. Besides
// ns/op, B/op (all allocation) and allocs/op it reports the heap at its
// highest during one parse+validate above the heap before it (peak-B, sampled
// every 100µs, so a little under the truth), what the parsed intent keeps
// (live-B), and the process's CPU time per op (cpu-ns/op, GC included: on
// a loaded machine it varies less than ns/op).
func benchParseValidate(b *testing.B, n int) {
	data := bigIntent(n)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		parseValidate(b, data)
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	peak, live := heapOf(func() any { return parseValidate(b, data) })
	b.ReportMetric(float64(peak), "peak-B")
	b.ReportMetric(float64(live), "live-B")
}

func parseValidate(b *testing.B, data []byte) *Intent {
	in, err := Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	if err := in.Validate(); err != nil {
		b.Fatal(err)
	}
	return in
}

// heapOf runs f once and returns the heap's peak during it and what f's
// result keeps, both above the heap before it, in bytes.
func heapOf(f func() any) (peak, live uint64) {
	runtime.GC()
	base := heapObjects()
	var (
		stop = make(chan struct{})
		wg   sync.WaitGroup
		high uint64
	)
	wg.Go(func() {
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			high = max(high, heapObjects())
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	})
	kept := f()
	close(stop)
	wg.Wait()
	high = max(high, heapObjects())
	runtime.GC()
	after := heapObjects()
	runtime.KeepAlive(kept)
	return sub(max(high, heapObjects()), base), sub(after, base)
}

// cpuTime returns the process's user and system CPU time, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func sub(a, b uint64) uint64 { return a - min(a, b) }

// heapObjects returns the bytes of heap objects, live or not yet swept.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
