package member

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/internal/etcdtest"
	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/etcd"
)

var testLayout = fleet.Layout{Prefix: "/na"}

// TestStatusWriterRenewsWithoutWriting, with a real etcd: the status is
// written when it changes, once; the lease's renewals, past its TTL, keep
// it without a write (the cluster's revision does not move), and the same
// status reported again writes nothing.
func TestStatusWriterRenewsWithoutWriting(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{})
	st, err := etcd.New(etcd.Config{Endpoints: srv.Endpoints()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log := logrus.New()
	log.SetOutput(io.Discard)
	const ttl = 2 * time.Second
	w, err := NewStatusWriter(StatusWriterConfig{Store: st, Layout: testLayout, Host: "h1", Labels: map[string]string{"site": "fra-1"}, Log: log, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	renewals := make(chan struct{}, 64)
	w.renewed = func() { renewals <- struct{}{} }
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	watch, err := st.Watch(ctx, testLayout.StatusDir(), store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	put := func() store.Entry {
		t.Helper()
		for {
			select {
			case ev := <-watch.C:
				if ev.Type == store.Put {
					return ev.Entry
				}
				if ev.Type == store.Delete {
					t.Fatalf("status deleted at %s", ev.Entry.Version)
				}
			case <-time.After(time.Minute):
				t.Fatal("no status written")
			}
		}
	}
	revision := func() store.Version {
		t.Helper()
		_, rev, err := st.ListKeys(ctx, testLayout.StatusDir())
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	renew := func(n int) {
		t.Helper()
		for range n {
			select {
			case <-renewals:
			case <-time.After(time.Minute):
				t.Fatal("no renewal")
			}
		}
	}

	w.Report(fleet.Status{Version: 1, Ready: true})
	first := put()
	if !strings.Contains(string(first.Value), `"labels":{"site":"fra-1"}`) {
		t.Errorf("the status has not the writer's labels: %s", first.Value)
	}
	// More renewals than the TTL lasts: the lease lives, nothing written.
	renew(int(ttl/(ttl/3)) + 1)
	w.Report(fleet.Status{Version: 1, Ready: true}) // the same again
	renew(2)
	if rev := revision(); rev != first.Version {
		t.Fatalf("the cluster's revision moved from %s to %s across the renewals: the status was rewritten", first.Version, rev)
	}
	e, err := st.Read(ctx, testLayout.Status("h1"))
	if err != nil || e.Version != first.Version {
		t.Fatalf("status after the renewals: %s %v", e.Version, err)
	}
	// A change is written once.
	w.Report(fleet.Status{Version: 2, Ready: true})
	second := put()
	renew(3)
	if rev := revision(); rev != second.Version {
		t.Fatalf("revision %s after the change written at %s and three renewals", rev, second.Version)
	}
}
