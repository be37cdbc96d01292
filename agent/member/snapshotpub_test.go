package member

import (
	"context"
	"crypto/rand"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netagent/netagent/agent/snapshot"
	"github.com/netagent/netagent/configurators/nftables"
	"github.com/netagent/netagent/internal/memstore"
)

// fakeHost is a host whose snapshot a test changes: Take returns its
// current document and counts the takes.
type fakeHost struct {
	mu    sync.Mutex
	alias string
	big   bool
	takes int
}

func (h *fakeHost) take(context.Context) (*snapshot.Document, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.takes++
	d := &snapshot.Document{Version: snapshot.Version, Netns: "n", Nftables: &nftables.State{Tables: []nftables.TableState{}},
		Links: []snapshot.Link{{Index: 1, Name: "lo", Kind: "loopback", MTU: 65536, Alias: h.alias}}}
	if h.big {
		b := make([]byte, 2*snapshot.MaxStored)
		rand.Read(b)
		d.Records = []snapshot.Record{{Path: "big", Content: b}}
	}
	return d, nil
}

func (h *fakeHost) set(f func(h *fakeHost)) {
	h.mu.Lock()
	f(h)
	h.mu.Unlock()
}

// TestSnapshotPublisher: the first snapshot is published at once; a
// burst of changes within the interval is one more snapshot, taken once
// the interval has passed; an unchanged host writes nothing; a snapshot
// too large is not written, the stale one is deleted and State says so;
// once it fits it is published again.
func TestSnapshotPublisher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := memstore.New()
		h := &fakeHost{alias: "a"}
		p, err := NewSnapshotPublisher(SnapshotPublisherConfig{Store: m, Layout: testLayout, Host: "h1", Log: discardLog(), Every: 10 * time.Second, Take: h.take})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go p.Run(ctx)
		synctest.Wait()
		read := func() (string, int64) {
			t.Helper()
			d, v, err := snapshot.ReadStored(ctx, m, testLayout, "h1")
			if err != nil {
				return err.Error(), 0
			}
			return d.Links[0].Alias, int64(v)
		}
		alias, v1 := read()
		if alias != "a" || h.takes != 1 || p.State() == nil || p.State().Revision != v1 {
			t.Fatalf("first publish: %q %d, %d takes, state %+v", alias, v1, h.takes, p.State())
		}
		for _, a := range []string{"b", "c", "d"} { // a burst within the interval
			h.set(func(h *fakeHost) { h.alias = a })
			p.Changed()
			time.Sleep(time.Second)
			synctest.Wait()
		}
		if alias, _ := read(); alias != "a" || h.takes != 1 {
			t.Errorf("within the interval: %q published, %d takes", alias, h.takes)
		}
		time.Sleep(8 * time.Second)
		synctest.Wait()
		alias, v2 := read()
		if alias != "d" || h.takes != 2 || v2 <= v1 {
			t.Errorf("after the interval: %q (version %d after %d), %d takes", alias, v2, v1, h.takes)
		}
		time.Sleep(10 * time.Second) // the periodic look: unchanged
		synctest.Wait()
		if _, v3 := read(); v3 != v2 || h.takes != 3 {
			t.Errorf("unchanged host: version %d (was %d), %d takes", v3, v2, h.takes)
		}
		h.set(func(h *fakeHost) { h.big = true })
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if msg, _ := read(); !strings.Contains(msg, "not found") || !strings.Contains(p.State().Error, "larger than the store takes") || p.State().Revision != 0 {
			t.Errorf("too large: read %q, state %+v", msg, p.State())
		}
		h.set(func(h *fakeHost) { h.big = false })
		time.Sleep(10 * time.Second)
		synctest.Wait()
		alias, v4 := read()
		if alias != "d" || p.State().Error != "" {
			t.Errorf("fits again: %q, state %+v", alias, p.State())
		}
		cancel()
		synctest.Wait()
		// A restarted publisher of the same host writes nothing.
		again, _ := NewSnapshotPublisher(SnapshotPublisherConfig{Store: m, Layout: testLayout, Host: "h1", Log: discardLog(), Every: 10 * time.Second, Take: h.take})
		ctx, cancel = context.WithCancel(context.Background())
		defer cancel()
		go again.Run(ctx)
		synctest.Wait()
		if _, v5 := read(); v5 != v4 || again.State() == nil || again.State().Revision != v4 {
			t.Errorf("after a restart: version %d (was %d), state %+v", v5, v4, again.State())
		}
		cancel()
	})
}
