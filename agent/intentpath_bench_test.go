package agent

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netagent/netagent/agent/render"
	"github.com/netagent/netagent/agent/versions"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/graphwalk"
)

// routesFile is an intent file of n routes over one link and one more
// route, extra, which the daemon's benchmark edits.
func routesFile(n, extra int) []byte {
	var b strings.Builder
	b.WriteString(`{"version": 1, "interfaces": [{"name": "uplink0", "type": "physical", "addresses": ["192.0.2.10/24"]}], "routes": [`)
	for i := range n {
		fmt.Fprintf(&b, `{"to": "10.%d.%d.%d/28", "via": "192.0.2.1", "table": 100},`, i/4096, i/16%256, i%16*16)
	}
	fmt.Fprintf(&b, `{"to": "172.16.%d.%d/32", "via": "192.0.2.1", "table": 100}]}`, extra/256, extra%256)
	return []byte(b.String())
}

// BenchmarkDaemonEditIntent100kRoutes is the daemon's intent path for a
// one-route edit of a 100k-route file (the part of
// test/netns's BenchmarkDaemonEditRoutes before the reconcile): the file
// read again, parsed, resolved (merged, validated, rendered), its version
// recorded, the new graph synced into the intended one, and the accepted
// document stored.
func BenchmarkDaemonEditIntent100kRoutes(b *testing.B) {
	const n = 100_000
	docs := [][]byte{routesFile(n, 0), routesFile(n, 1)}
	dir := b.TempDir()
	store := &goodStore{dir: dir}
	hist := versions.Open(dir, 3)
	intended := dg.New(render.GraphName)
	set := newDocSet()
	step := func(raw []byte) {
		next := set.clone()
		next.update("dir", map[string][]byte{"r.json": raw})
		res, err := next.resolve(time.Now(), render.RenderFiles)
		if err != nil || !res.changed || len(res.rejected) > 0 {
			b.Fatalf("resolve: %v %+v", err, res)
		}
		v, err := versions.NewParsed("daemon: files r.json", next.acceptedFiles())
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := hist.Write(v, versions.Any); err != nil {
			b.Fatal(err)
		}
		graphwalk.Sync(intended, res.graph)
		set = next
		if err := store.save(set); err != nil {
			b.Fatal(err)
		}
	}
	step(docs[0])
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := range b.N {
		step(docs[(i+1)%2])
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
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
