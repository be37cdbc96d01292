package member

// The figures of docs/fleet.md, measured against one etcd 3.4 (Debian's,
// internal/etcdtest) on this machine:
//
//	go test -run '^$' -bench 'Fleet' -benchtime 50x ./agent/member/

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/internal/etcdtest"
	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/etcd"
)

// fleetClients opens n clients of srv, closed when b ends.
func fleetClients(b *testing.B, srv *etcdtest.Server, n int) []*etcd.Store {
	b.Helper()
	clients := make([]*etcd.Store, n)
	for i := range clients {
		st, err := etcd.New(etcd.Config{Endpoints: srv.Endpoints(), RequestTimeout: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		clients[i] = st
	}
	return clients
}

// BenchmarkFleetWatchFanout: 1,000 watches of one group's directory, each
// on a client of its own (a connection, as 1,000 agents have), or all on
// 10 clients; one put per iteration, timed from before the put to each
// watch's delivery. Reports the median and p99 of those delays over every
// watch and put, and the median time until the last watch has it.
func BenchmarkFleetWatchFanout(b *testing.B) {
	for _, c := range []struct{ watches, clients int }{{1000, 1000}, {1000, 10}} {
		b.Run(fmt.Sprintf("watches=%d/clients=%d", c.watches, c.clients), func(b *testing.B) {
			benchWatchFanout(b, c.watches, c.clients)
		})
	}
}

func benchWatchFanout(b *testing.B, watches, nclients int) {
	srv := etcdtest.Start(b, etcdtest.Options{})
	clients := fleetClients(b, srv, nclients)
	dir := fleet.Layout{}.Group("edge")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var start atomic.Int64 // UnixNano before the put being timed
	var synced, got sync.WaitGroup
	delays := make([][]time.Duration, watches)
	synced.Add(watches)
	for i := range watches {
		w, err := clients[i%nclients].Watch(ctx, dir, store.NoVersion)
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			for ev := range w.C {
				switch ev.Type {
				case store.Synced:
					synced.Done()
				case store.Put:
					delays[i] = append(delays[i], time.Duration(time.Now().UnixNano()-start.Load()))
					got.Done()
				}
			}
		}()
	}
	synced.Wait()
	writer := clients[0]
	key := dir + "/base.json"
	version := store.NoVersion
	lasts := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		got.Add(watches)
		t0 := time.Now()
		start.Store(t0.UnixNano())
		v, err := writer.WriteCAS(ctx, key, []byte(fmt.Sprintf(`{"version": 1, "sysctls": {"net.ipv4.ip_forward": "%d"}}`, i%2)), version)
		if err != nil {
			b.Fatal(err)
		}
		version = v
		got.Wait()
		lasts = append(lasts, time.Since(t0))
	}
	b.StopTimer()
	var all []time.Duration
	for _, d := range delays {
		all = append(all, d...)
	}
	b.ReportMetric(float64(fleetQuantile(all, 0.5).Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(fleetQuantile(all, 0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(fleetQuantile(lasts, 0.5).Microseconds())/1000, "all-notified-median-ms")
}

func fleetQuantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// BenchmarkFleetLeaseRenewals: what a fleet member does every TTL/3 (the
// daemon's StatusWriter): renew its lease (KeepAlive: one KeepAliveOnce)
// and, in "renew+status", rewrite its ~0.5 kB status under it. 64
// goroutines on 8 clients, each with a lease of its own; reports the
// operations one etcd sustains per second.
func BenchmarkFleetLeaseRenewals(b *testing.B) {
	for _, withStatus := range []bool{false, true} {
		name := "renew"
		if withStatus {
			name = "renew+status"
		}
		b.Run(name, func(b *testing.B) { benchLeaseRenewals(b, withStatus) })
	}
}

func benchLeaseRenewals(b *testing.B, withStatus bool) {
	const workers, nclients = 64, 8
	srv := etcdtest.Start(b, etcdtest.Options{})
	clients := fleetClients(b, srv, nclients)
	ctx := context.Background()
	layout := fleet.Layout{}
	leases := make([]store.LeaseID, workers)
	for i := range leases {
		id, err := clients[i%nclients].GrantLease(ctx, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		leases[i] = id
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	t0 := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := clients[w%nclients]
			host := fmt.Sprintf("host-%05d", w)
			version := store.NoVersion
			for next.Add(1) <= int64(b.N) {
				if err := st.KeepAlive(ctx, leases[w]); err != nil {
					b.Error(err)
					return
				}
				if !withStatus {
					continue
				}
				data, _ := json.Marshal(fleet.Status{Host: host, Version: 42, Digest: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
					Ready: true, Converged: time.Now(), Updated: time.Now(),
					Revisions:  map[string]int64{"hosts/" + host + "/base.json": 1234, "groups/edge-eu/routes.json": 5678},
					Conditions: []fleet.Condition{{Type: "Ready", Status: true}, {Type: "Degraded", Status: false}}})
				v, err := st.WriteLeased(ctx, layout.Status(host), data, version, leases[w])
				if err != nil {
					b.Error(err)
					return
				}
				version = v
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
}
