package rollout

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netagent/netagent/fleet"
	"github.com/netagent/netagent/store"
)

// cutWatchStore ends its first watch after `after` events with
// ErrWatchClosed, and refuses a watch from a revision (as etcd does
// from a compacted one) while compacted is set.
type cutWatchStore struct {
	store.Store
	after     int
	compacted atomic.Bool
	watches   atomic.Int32
}

func (s *cutWatchStore) Watch(ctx context.Context, prefix string, from store.Version) (*store.Watch, error) {
	first := s.watches.Add(1) == 1
	if from != store.NoVersion && s.compacted.Load() {
		return nil, fmt.Errorf("revision %s: %w", from, store.ErrWatchClosed)
	}
	inner, err := s.Store.Watch(ctx, prefix, from)
	if err != nil {
		return nil, err
	}
	return store.NewWatch(ctx, func(ctx context.Context, emit store.Emit) error {
		n := 0
		for ev := range inner.C {
			if !emit(ev) {
				return ctx.Err()
			}
			if n++; first && n == s.after {
				return fmt.Errorf("cut: %w", store.ErrWatchClosed)
			}
		}
		return inner.Err()
	}), nil
}

// watchedHosts waits until w holds the statuses of want (sorted).
func watchedHosts(t *testing.T, w *StatusWatch, want []string) {
	t.Helper()
	var got []string
	for range 1000 {
		if m, ok := w.statuses(); ok {
			if got = slices.Sorted(maps.Keys(m)); slices.Equal(got, want) {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the watch holds %v, want %v", got, want)
}

// TestStatusWatchFollowsAndRelists: the watch holds every status, follows
// writes and deletions, resumes a watch that ended from where it was,
// and lists again when that revision is gone.
func TestStatusWatchFollowsAndRelists(t *testing.T) {
	f, _ := newFleet(t, 3)
	cs := &cutWatchStore{Store: f.st, after: 6}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := WatchStatuses(ctx, cs, layout)
	watchedHosts(t, w, f.hosts)
	f.write("edge-003", fleet.Status{Host: "edge-003", Ready: true})
	f.write("edge-004", fleet.Status{Host: "edge-004", Ready: true})
	f.st.WriteCAS(ctx, layout.Status("bad/name"), []byte(`{}`), 0)
	f.st.WriteCAS(ctx, layout.Status("edge-005"), []byte(`not json`), 0)
	watchedHosts(t, w, []string{"edge-000", "edge-001", "edge-002", "edge-003", "edge-004"})
	// Cut after the listing's 4 events and 2 more; resumed from there, the
	// revision compacted meanwhile: listed again.
	cs.compacted.Store(true)
	e, _ := f.st.Read(ctx, layout.Status("edge-001"))
	if err := f.st.DeleteCAS(ctx, layout.Status("edge-001"), e.Version); err != nil {
		t.Fatal(err)
	}
	f.write("edge-006", fleet.Status{Host: "edge-006", Ready: true})
	watchedHosts(t, w, []string{"edge-000", "edge-002", "edge-003", "edge-004", "edge-006"})
	if w.Restarts() == 0 || cs.watches.Load() < 2 {
		t.Errorf("%d restarts, %d watches: the cut watch was not started again", w.Restarts(), cs.watches.Load())
	}
}

// TestThreeWavesCompleteWatched is TestThreeWavesComplete with the
// statuses from a watch: the same outcome.
func TestThreeWavesCompleteWatched(t *testing.T) {
	f, cs, clock := started(t, 20, threeWaves)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newController(cs, clock, "c1")
	c.Watch = WatchStatuses(ctx, cs, layout)
	watchedHosts(t, c.Watch, f.hosts)
	for range 10000 {
		r, err := c.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.Final() {
			if r.Phase != PhaseCompleted {
				t.Fatalf("phase %s", r.Phase)
			}
			break
		}
		before, _, _ := cs.List(ctx, layout.StatusDir())
		f.react()
		after, _, _ := cs.List(ctx, layout.StatusDir())
		if len(before) != len(after) || !sameEntries(before, after) {
			caughtUp(t, c.Watch, cs)
		}
		if !r.Wrote {
			clock.advance(10 * time.Second)
		}
	}
	s := load(t, cs)
	if n := pushedOnce(t, cs); n != 20 || s.Phase != PhaseCompleted {
		t.Errorf("%d hosts pushed, phase %s", n, s.Phase)
	}
}

func sameEntries(a, b []store.Entry) bool {
	for i := range a {
		if a[i].Version != b[i].Version {
			return false
		}
	}
	return true
}

// caughtUp waits until the watch holds the statuses the store lists.
func caughtUp(t *testing.T, w *StatusWatch, st store.Store) {
	t.Helper()
	entries, _, err := st.List(context.Background(), layout.StatusDir())
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		m, ok := w.statuses()
		same := ok && len(m) == len(entries)
		for _, e := range entries {
			want := parseStatus(e.Key[len(layout.StatusDir())+1:], e.Value)
			if got := m[want.Host]; !same || got == nil || !sameTrial(got.Trial, want.Trial) || got.Ready != want.Ready {
				same = false
			}
		}
		if same {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the watch never caught up with the store")
}

func sameTrial(a, b *fleet.Trial) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Equal(*b))
}
