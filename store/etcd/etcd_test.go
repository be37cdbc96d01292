package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netagent/netagent/internal/etcdtest"
	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/etcd"
	"github.com/netagent/netagent/store/storetest"
)

func newStore(t *testing.T, cfg etcd.Config) *etcd.Store {
	t.Helper()
	s, err := etcd.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// One server for the suite; each store of it a namespace of its own.
func TestConformance(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{})
	var n atomic.Int64
	storetest.Run(t, func(t *testing.T) store.Store {
		return newStore(t, etcd.Config{Endpoints: srv.Endpoints(), Namespace: fmt.Sprintf("/test-%d", n.Add(1))})
	})
}

// The suite again over TLS with a client certificate.
func TestConformanceTLS(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{TLS: true})
	var n atomic.Int64
	storetest.Run(t, func(t *testing.T) store.Store {
		return newStore(t, etcd.Config{
			Endpoints: srv.Endpoints(), Namespace: fmt.Sprintf("/test-%d", n.Add(1)),
			CAFile: srv.TLS.CAFile, CertFile: srv.TLS.CertFile, KeyFile: srv.TLS.KeyFile,
		})
	})
}

// A client without a certificate is refused by a server that requires
// one: no answer, ErrUnavailable.
func TestTLSWithoutClientCertificate(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{TLS: true})
	s := newStore(t, etcd.Config{Endpoints: srv.Endpoints(), CAFile: srv.TLS.CAFile, RequestTimeout: time.Second})
	if _, err := s.Read(t.Context(), "k"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Read without a client certificate: %v, want ErrUnavailable", err)
	}
	if _, err := etcd.New(etcd.Config{Endpoints: srv.Endpoints(), CertFile: srv.TLS.CertFile}); err == nil {
		t.Fatal("a certificate without its key was accepted")
	}
}

// retry runs op until it stops failing with ErrUnavailable: the client
// reconnects to a restarted server on its own schedule.
func retry(t *testing.T, op func() error) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := op()
		if !errors.Is(err, store.ErrUnavailable) {
			if err != nil {
				t.Fatal(err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still unavailable: %v", err)
		}
	}
}

// retryWrite writes value at key with WriteCAS until etcd answers, and
// returns its version. An attempt that timed out (ErrUnavailable) may
// still have been committed: a later attempt then finds the version moved
// on (ErrConflict), and the write is done if the key holds value.
func retryWrite(t *testing.T, ctx context.Context, s store.Store, key, value string, expect store.Version) store.Version {
	t.Helper()
	var v store.Version
	ambiguous := false
	retry(t, func() (err error) {
		v, err = s.WriteCAS(ctx, key, []byte(value), expect)
		if ambiguous && errors.Is(err, store.ErrCASFailed) {
			e, rerr := s.Read(ctx, key)
			if rerr == nil && string(e.Value) == value {
				v = e.Version
				return nil
			}
			return errors.Join(err, rerr)
		}
		ambiguous = ambiguous || errors.Is(err, store.ErrUnavailable)
		return err
	})
	return v
}

// etcd killed and restarted: while it is down every operation fails with
// ErrUnavailable; the watch then resumes with nothing lost or repeated
// (or ends with ErrWatchClosed, and a new one lists everything).
func TestKillAndRestart(t *testing.T) {
	ctx := t.Context()
	srv := etcdtest.Start(t, etcdtest.Options{})
	s := newStore(t, etcd.Config{Endpoints: srv.Endpoints(), RequestTimeout: time.Second})
	w, err := s.Watch(ctx, "/r", store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-w.C; ev.Type != store.Synced {
		t.Fatalf("first event %v", ev.Type)
	}
	v1, err := s.WriteCAS(ctx, "/r/1", []byte("one"), store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-w.C; ev.Entry.Version != v1 {
		t.Fatalf("event %v@%s, want the put at %s", ev.Type, ev.Entry.Version, v1)
	}

	srv.Kill()
	if _, err := s.Read(ctx, "/r/1"); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Read while etcd is down: %v, want ErrUnavailable", err)
	}
	if _, err := s.WriteCAS(ctx, "/r/2", []byte("two"), store.NoVersion); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("WriteCAS while etcd is down: %v, want ErrUnavailable", err)
	}
	if err := s.DeleteCAS(ctx, "/r/1", v1); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("DeleteCAS while etcd is down: %v, want ErrUnavailable", err)
	}
	if _, _, err := s.List(ctx, "/r"); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("List while etcd is down: %v, want ErrUnavailable", err)
	}
	if _, err := s.GrantLease(ctx, 10*time.Second); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("GrantLease while etcd is down: %v, want ErrUnavailable", err)
	}
	srv.Restart()

	// Another client writes first: the watch must catch up on it.
	other := newStore(t, etcd.Config{Endpoints: srv.Endpoints()})
	v2 := retryWrite(t, ctx, other, "/r/2", "two", store.NoVersion)
	if e, err := s.Read(ctx, "/r/1"); err != nil && !errors.Is(err, store.ErrUnavailable) || err == nil && e.Version != v1 {
		t.Fatalf("Read after the restart: %v@%s, %v", e.Value, e.Version, err)
	}
	v3 := retryWrite(t, ctx, s, "/r/1", "one again", v1)

	var got []store.Event
	for len(got) < 2 {
		select {
		case ev, ok := <-w.C:
			if !ok {
				if !errors.Is(w.Err(), store.ErrWatchClosed) {
					t.Fatalf("the watch ended with %v, want ErrWatchClosed or to go on", w.Err())
				}
				t.Logf("the watch ended with %v: the consumer lists again", w.Err())
				return
			}
			got = append(got, ev)
		case <-time.After(time.Minute):
			t.Fatalf("the watch delivered %d events after the restart", len(got))
		}
	}
	if got[0].Entry.Key != "/r/2" || got[0].Entry.Version != v2 || got[1].Entry.Key != "/r/1" || got[1].Entry.Version != v3 {
		t.Fatalf("after the restart the watch delivered %v, want /r/2@%s then /r/1@%s", got, v2, v3)
	}
}

// A watch from a compacted revision ends with ErrWatchClosed; a watch
// from the compaction's revision on goes on.
func TestCompactionClosesWatch(t *testing.T) {
	ctx := t.Context()
	srv := etcdtest.Start(t, etcdtest.Options{})
	s := newStore(t, etcd.Config{Endpoints: srv.Endpoints()})
	v1, err := s.WriteCAS(ctx, "/c/k", []byte("1"), store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := s.WriteCAS(ctx, "/c/k", []byte("2"), v1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(ctx, v2); err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx, "/c", v1-1)
	if err != nil {
		t.Fatal(err)
	}
	for ev := range w.C {
		t.Errorf("a watch from a compacted revision delivered %v@%s", ev.Type, ev.Entry.Version)
	}
	if err := w.Err(); !errors.Is(err, store.ErrWatchClosed) {
		t.Fatalf("a watch from a compacted revision ended with %v, want ErrWatchClosed", err)
	}
	w2, err := s.Watch(ctx, "/c", v2)
	if err != nil {
		t.Fatal(err)
	}
	v3, err := s.WriteCAS(ctx, "/c/k", []byte("3"), v2)
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-w2.C; ev.Type != store.Put || ev.Entry.Version != v3 {
		t.Fatalf("after the compaction: %v@%s, %v", ev.Type, ev.Entry.Version, w2.Err())
	}
}

// A leased key disappears when its writer stops renewing the lease.
func TestLeaseExpires(t *testing.T) {
	ctx := t.Context()
	srv := etcdtest.Start(t, etcdtest.Options{})
	s := newStore(t, etcd.Config{Endpoints: srv.Endpoints()})
	id, err := s.GrantLease(ctx, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx, "/status", store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	<-w.C // synced
	v, err := s.WriteLeased(ctx, "/status/h1", []byte("ready"), store.NoVersion, id)
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-w.C; ev.Type != store.Put || ev.Entry.Version != v {
		t.Fatalf("got %v@%s", ev.Type, ev.Entry.Version)
	}
	select { // no renewal: the server expires the lease
	case ev := <-w.C:
		if ev.Type != store.Delete || ev.Entry.Key != "/status/h1" {
			t.Fatalf("got %v %s, want the delete of /status/h1", ev.Type, ev.Entry.Key)
		}
	case <-time.After(time.Minute):
		t.Fatal("the leased key outlived its lease")
	}
	if err := s.KeepAlive(ctx, id); !errors.Is(err, store.ErrLeaseExpired) {
		t.Fatalf("KeepAlive of an expired lease: %v, want ErrLeaseExpired", err)
	}
	if _, err := s.WriteLeased(ctx, "/status/h1", nil, store.NoVersion, id); !errors.Is(err, store.ErrLeaseExpired) {
		t.Fatalf("WriteLeased on an expired lease: %v, want ErrLeaseExpired", err)
	}
}
