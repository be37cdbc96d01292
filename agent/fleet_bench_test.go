package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/agent/member"
	"github.com/netagent/netagent/agent/source"
	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/internal/etcdtest"
	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/etcd"
)

// BenchmarkFleetPush: 200 agents (fake kernels, in this process) watch
// one group on one etcd (Debian's, internal/etcdtest), sharing
// benchClients client connections. Each iteration pushes a new version of
// the group's document and waits until every agent's status in etcd says
// Ready with that revision. It reports the median and p99, over every
// agent and push, of the time from the push to the converged status as an
// observer watching the status keys sees it (ms), with the agents' default
// 200 ms debounce.
func BenchmarkFleetPush(b *testing.B) {
	f := startBenchFleet(b, 200, 20)
	defer f.stop()
	ctx, pusher, key, rev := f.ctx, f.clients[0], f.key, f.rev
	agents, obs := f.agents, f.obs

	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		at := time.Now()
		next, err := pusher.WriteCAS(ctx, key, benchRoutesDoc(i+1), rev)
		if err != nil {
			b.Fatal(err)
		}
		rev = next
		for _, t := range obs.wait(b, agents, rev) {
			lat = append(lat, t.Sub(at))
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}

// benchFleet is agents agents (fake kernels, in this process) members of
// group edge on one etcd (Debian's, internal/etcdtest), sharing nclients
// client connections, converged to the group's document key (at rev).
type benchFleet struct {
	ctx     context.Context
	clients []*etcd.Store
	layout  fleet.Layout
	key     string
	rev     store.Version
	agents  int
	obs     *statusObserver
	stop    func()
}

func startBenchFleet(b *testing.B, agents, nclients int) *benchFleet {
	srv := etcdtest.Start(b, etcdtest.Options{})
	f := &benchFleet{layout: fleet.Layout{Prefix: "/bench"}, agents: agents}
	for range nclients {
		st, err := etcd.New(etcd.Config{Endpoints: srv.Endpoints()})
		if err != nil {
			b.Fatal(err)
		}
		f.clients = append(f.clients, st)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	f.ctx, f.stop = ctx, func() {
		cancel()
		wg.Wait()
		for _, st := range f.clients {
			st.Close()
		}
	}
	f.key = f.layout.GroupDoc("edge", "routes.json")
	var err error
	if f.rev, err = f.clients[0].WriteCAS(ctx, f.key, benchRoutesDoc(0), store.NoVersion); err != nil {
		b.Fatal(err)
	}
	// The observer: for each host, its status's revision of the document.
	f.obs = newStatusObserver(b, ctx, f.clients[0], f.layout, f.key)
	log := logrus.New()
	log.SetOutput(io.Discard)
	log.SetLevel(logrus.ErrorLevel)
	for i := range agents {
		st := f.clients[i%nclients]
		host := fmt.Sprintf("h%04d", i)
		src, err := member.NewStoreSource(member.StoreSourceConfig{Store: st, Layout: f.layout, Host: host, Groups: []string{"edge"}, Log: log})
		if err != nil {
			b.Fatal(err)
		}
		w, err := member.NewStatusWriter(member.StatusWriterConfig{Store: st, Layout: f.layout, Host: host, Log: log, Source: src})
		if err != nil {
			b.Fatal(err)
		}
		a, err := New(Config{Kernel: newFakeKernel(uplink(2, true)), Log: log, Sources: []source.IntentSource{src}, Report: w.Report})
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(2)
		go func() { defer wg.Done(); w.Run(ctx) }()
		go func() { defer wg.Done(); a.Run(ctx) }()
	}
	f.obs.wait(b, agents, f.rev)
	return f
}

// benchRoutesDoc is the group's document, version n: an uplink and ten
// routes whose metric is n.
func benchRoutesDoc(n int) []byte {
	routes := make([]map[string]any, 10)
	for i := range routes {
		routes[i] = map[string]any{"to": fmt.Sprintf("10.%d.0.0/16", i), "via": "192.0.2.1", "dev": "uplink0", "metric": n}
	}
	doc := map[string]any{"version": 1, "interfaces": []map[string]any{{"name": "uplink0", "type": "physical",
		"addresses": []string{"192.0.2.2/24"}}}, "routes": routes}
	raw, _ := json.Marshal(doc)
	return raw
}

// statusObserver watches every status key and records when each host
// first reported Ready with each revision of the document.
type statusObserver struct {
	mu     sync.Mutex
	seen   map[store.Version]map[string]time.Time // revision → host → when
	update chan struct{}
}

func newStatusObserver(b *testing.B, ctx context.Context, st store.Store, layout fleet.Layout, key string) *statusObserver {
	o := &statusObserver{seen: map[store.Version]map[string]time.Time{}, update: make(chan struct{}, 1)}
	w, err := st.Watch(ctx, layout.StatusDir(), store.NoVersion)
	if err != nil {
		b.Fatal(err)
	}
	source := layout.Source(key)
	go func() {
		for ev := range w.C {
			if ev.Type != store.Put {
				continue
			}
			now := time.Now()
			var s fleet.Status
			if json.Unmarshal(ev.Entry.Value, &s) != nil || !s.Ready {
				continue
			}
			r := store.Version(s.Revisions[source])
			o.mu.Lock()
			if o.seen[r] == nil {
				o.seen[r] = map[string]time.Time{}
			}
			if _, ok := o.seen[r][s.Host]; !ok {
				o.seen[r][s.Host] = now
			}
			o.mu.Unlock()
			select {
			case o.update <- struct{}{}:
			default:
			}
		}
	}()
	return o
}

// wait returns when n hosts reported rev, with when each did.
func (o *statusObserver) wait(b *testing.B, n int, rev store.Version) []time.Time {
	deadline := time.After(2 * time.Minute)
	for {
		o.mu.Lock()
		got := o.seen[rev]
		have := len(got)
		if have >= n {
			out := make([]time.Time, 0, len(got))
			for _, t := range got {
				out = append(out, t)
			}
			o.mu.Unlock()
			return out
		}
		o.mu.Unlock()
		select {
		case <-o.update:
		case <-deadline:
			b.Fatalf("only %d of %d agents reported revision %d", have, n, rev)
		}
	}
}
