package member

import (
	"context"
	"io"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/internal/memstore"
	"github.com/netagent/netagent/store"
)

func discardLog() logrus.FieldLogger {
	log := logrus.New()
	log.SetOutput(io.Discard)
	return log
}

// TestStoreSourceNames: documents deeper than one level are not
// documents, names are the layout's sources, and bad names are refused.
func TestStoreSourceNames(t *testing.T) {
	if _, err := NewStoreSource(StoreSourceConfig{Store: memstore.New(), Host: "a/b", Log: discardLog()}); err == nil {
		t.Error("a host name with a slash was accepted")
	}
	if _, err := NewStoreSource(StoreSourceConfig{Store: memstore.New(), Host: "h", Groups: []string{".."}, Log: discardLog()}); err == nil {
		t.Error("a group named .. was accepted")
	}
	synctest.Test(t, func(t *testing.T) {
		m := memstore.New()
		m.Put(testLayout.HostDoc("h1", "a.json"), "A")
		m.Put(testLayout.HostDoc("h1", "sub/b.json"), "B")
		m.Put(testLayout.GroupDoc("g1", "c.json"), "C")
		m.Put(testLayout.GroupDoc("g2", "d.json"), "D")
		src, err := NewStoreSource(StoreSourceConfig{Store: m, Layout: testLayout, Host: "h1", Groups: []string{"g1", "g1"}, Log: discardLog()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src.Load(); err == nil {
			t.Error("Load before the listing succeeded")
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		changed := make(chan string, 1)
		go src.Watch(ctx, changed)
		<-changed
		synctest.Wait()
		got, err := src.Load()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || string(got["hosts/h1/a.json"]) != "A" || string(got["groups/g1/c.json"]) != "C" {
			t.Errorf("Load: %q", got)
		}
		rev, ok := src.Revision("groups/g1/c.json", []byte("C"))
		if e, _ := m.Get(testLayout.GroupDoc("g1", "c.json")); !ok || rev != int64(e.Version) {
			t.Errorf("Revision %d %v, want %d", rev, ok, e.Version)
		}
		if _, ok := src.Revision("groups/g1/c.json", []byte("other")); ok {
			t.Error("a revision for content never delivered")
		}
		src.SetReachable(store.ErrUnavailable)
		if _, err := src.Load(); err == nil || !strings.Contains(err.Error(), ErrSourceUnreachable.Error()) {
			t.Errorf("Load while unreachable: %v", err)
		}
		cancel()
	})
}
