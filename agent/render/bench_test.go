package render

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"syscall"
	"testing"
)

// BenchmarkLoad100kRoutes is what `netagent validate` does with one file
// of 100k routes over one link (parse, merge, validate, render).
func BenchmarkLoad100kRoutes(b *testing.B) {
	var s strings.Builder
	s.WriteString(`{"version": 1, "interfaces": [{"name": "eth0", "type": "physical", "addresses": ["10.0.0.1/8"]}], "routes": [`)
	for i := range 100_000 {
		if i > 0 {
			s.WriteString(",")
		}
		v := i * 16
		fmt.Fprintf(&s, `{"to": "172.%d.%d.%d/28", "via": "10.0.0.254", "dev": "eth0", "metric": 100}`, 16+v>>16, v>>8&255, v&255)
	}
	s.WriteString(`]}`)
	files := map[string][]byte{"routes.json": []byte(s.String())}
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		if _, err := Load(files); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	runtime.GC()
	before := heapObjects()
	g, err := Load(files)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	after := heapObjects()
	b.ReportMetric(float64(after-min(after, before)), "live-B")
	runtime.KeepAlive(g)
}

// cpuTime returns the process's user and system CPU time, in ns (GC
// included: on a loaded machine it varies less than ns/op).
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// heapObjects returns the bytes of heap objects, live or not yet swept.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
