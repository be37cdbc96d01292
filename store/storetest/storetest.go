// Package storetest is the conformance suite of store backends: Run
// checks that a backend keeps every promise of store.Store (and of
// store.Leaser and store.Compactor when it has them). Each backend's
// tests call Run.
//
// It checks: compare-and-swap (create, replace, mismatches naming both
// versions), races of 8 writers from one version over 10 rounds (exactly
// one wins), delete semantics, strictly increasing versions (deletes
// included), prefixes as directories, invalid keys refused with nothing
// written, values over 1 MiB, and watches: the snapshot then the changes,
// order and exactly-once under concurrent writers, a watch started while
// writers run (its snapshot is exactly the writes up to its revision, its
// changes exactly the ones after), resuming from a version, cancellation,
// leases ending in a delete, compaction ending a watch with
// store.ErrWatchClosed.
package storetest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netagent/netagent/store"
)

// eventWait bounds the wait for one watch event, so that a lost event
// fails the test with a message instead of hanging it; no test asserts
// how fast anything is.
const eventWait = 60 * time.Second

// Run runs the suite; newStore returns a new, empty store for one
// subtest and closes it when the subtest ends (t.Cleanup). Stores from
// two calls must not see each other's keys.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"ReadMissing", testReadMissing},
		{"CreateReplace", testCreateReplace},
		{"CASRaceCreate", testCASRaceCreate},
		{"CASRaceReplace", testCASRaceReplace},
		{"Delete", testDelete},
		{"VersionsIncrease", testVersionsIncrease},
		{"ListPrefix", testListPrefix},
		{"ListKeys", testListKeys},
		{"InvalidKeys", testInvalidKeys},
		{"LargeValue", testLargeValue},
		{"WatchSnapshotThenChanges", testWatchSnapshotThenChanges},
		{"WatchOrderConcurrentWriters", testWatchOrderConcurrent},
		{"WatchStartedBetweenWrites", testWatchBetweenWrites},
		{"WatchFromVersion", testWatchFromVersion},
		{"WatchCancel", testWatchCancel},
		{"Leases", testLeases},
		{"Compaction", testCompaction},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

func ctxT(t *testing.T) context.Context { return t.Context() }

func mustWrite(t *testing.T, s store.Store, key, value string, expect store.Version) store.Version {
	t.Helper()
	v, err := s.WriteCAS(ctxT(t), key, []byte(value), expect)
	if err != nil {
		t.Fatalf("WriteCAS(%q, expect %s): %v", key, expect, err)
	}
	if v <= expect {
		t.Fatalf("WriteCAS(%q, expect %s) returned version %s, not greater", key, expect, v)
	}
	return v
}

func mustRead(t *testing.T, s store.Store, key string) store.Entry {
	t.Helper()
	e, err := s.Read(ctxT(t), key)
	if err != nil {
		t.Fatalf("Read(%q): %v", key, err)
	}
	if e.Key != key {
		t.Fatalf("Read(%q) returned key %q", key, e.Key)
	}
	return e
}

func wantCAS(t *testing.T, err error, key string, expected, stored store.Version) {
	t.Helper()
	var ce *store.CASError
	if !errors.Is(err, store.ErrCASFailed) || !errors.As(err, &ce) {
		t.Fatalf("got %v, want a *store.CASError", err)
	}
	if ce.Key != key || ce.Expected != expected || ce.Stored != stored {
		t.Fatalf("CAS error %+v, want key %q expected %s stored %s", *ce, key, expected, stored)
	}
}

func testReadMissing(t *testing.T, s store.Store) {
	_, err := s.Read(ctxT(t), "no/such/key")
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Read of a missing key: %v, want ErrNotFound", err)
	}
}

func testCreateReplace(t *testing.T, s store.Store) {
	v1 := mustWrite(t, s, "a/doc", "one", store.NoVersion)
	if e := mustRead(t, s, "a/doc"); string(e.Value) != "one" || e.Version != v1 {
		t.Fatalf("Read = %q@%s, want one@%s", e.Value, e.Version, v1)
	}
	_, err := s.WriteCAS(ctxT(t), "a/doc", []byte("again"), store.NoVersion)
	wantCAS(t, err, "a/doc", store.NoVersion, v1)
	_, err = s.WriteCAS(ctxT(t), "a/doc", []byte("stale"), v1+100)
	wantCAS(t, err, "a/doc", v1+100, v1)
	_, err = s.WriteCAS(ctxT(t), "a/other", []byte("x"), v1)
	wantCAS(t, err, "a/other", v1, store.NoVersion)
	v2 := mustWrite(t, s, "a/doc", "two", v1)
	if e := mustRead(t, s, "a/doc"); string(e.Value) != "two" || e.Version != v2 {
		t.Fatalf("Read = %q@%s, want two@%s", e.Value, e.Version, v2)
	}
	_, err = s.WriteCAS(ctxT(t), "a/doc", []byte("old"), v1)
	wantCAS(t, err, "a/doc", v1, v2)
	if e := mustRead(t, s, "a/doc"); string(e.Value) != "two" {
		t.Fatalf("a failed CAS changed the value to %q", e.Value)
	}
	// An empty value is a value.
	v3 := mustWrite(t, s, "a/empty", "", store.NoVersion)
	if e := mustRead(t, s, "a/empty"); len(e.Value) != 0 || e.Version != v3 {
		t.Fatalf("Read of an empty value = %q@%s", e.Value, e.Version)
	}
}

const (
	raceWriters = 8
	raceRounds  = 10
)

// race runs raceWriters writes of key expecting expect, released at once,
// and checks that exactly one wins and the others fail naming its version.
func race(t *testing.T, s store.Store, key string, expect store.Version, round int) store.Version {
	t.Helper()
	type result struct {
		v   store.Version
		err error
	}
	start := make(chan struct{})
	results := make([]result, raceWriters)
	var wg sync.WaitGroup
	for i := range raceWriters {
		wg.Go(func() {
			<-start
			v, err := s.WriteCAS(ctxT(t), key, fmt.Appendf(nil, "writer %d round %d", i, round), expect)
			results[i] = result{v, err}
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, r := range results {
		if r.err == nil {
			if winner >= 0 {
				t.Fatalf("round %d: writers %d and %d both won the CAS on %q from %s", round, winner, i, key, expect)
			}
			winner = i
		} else if !errors.Is(r.err, store.ErrCASFailed) {
			t.Fatalf("round %d: writer %d: %v, want ErrCASFailed", round, i, r.err)
		}
	}
	if winner < 0 {
		t.Fatalf("round %d: no writer won the CAS on %q from %s", round, key, expect)
	}
	won := results[winner].v
	for i, r := range results {
		if i != winner {
			wantCAS(t, r.err, key, expect, won)
		}
	}
	e := mustRead(t, s, key)
	if e.Version != won || string(e.Value) != fmt.Sprintf("writer %d round %d", winner, round) {
		t.Fatalf("round %d: stored %q@%s, want the winner's (writer %d, %s)", round, e.Value, e.Version, winner, won)
	}
	return won
}

func testCASRaceCreate(t *testing.T, s store.Store) {
	for r := range raceRounds {
		race(t, s, fmt.Sprintf("race/create/%d", r), store.NoVersion, r)
	}
}

func testCASRaceReplace(t *testing.T, s store.Store) {
	v := mustWrite(t, s, "race/doc", "start", store.NoVersion)
	for r := range raceRounds {
		next := race(t, s, "race/doc", v, r)
		if next <= v {
			t.Fatalf("round %d: version %s after %s", r, next, v)
		}
		v = next
	}
}

func testDelete(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	if err := s.DeleteCAS(ctx, "d/missing", 1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete of a missing key: %v, want ErrNotFound", err)
	}
	if err := s.DeleteCAS(ctx, "d/missing", store.NoVersion); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete of a missing key expecting none: %v, want ErrNotFound", err)
	}
	v1 := mustWrite(t, s, "d/k", "v", store.NoVersion)
	wantCAS(t, s.DeleteCAS(ctx, "d/k", v1+1), "d/k", v1+1, v1)
	wantCAS(t, s.DeleteCAS(ctx, "d/k", store.NoVersion), "d/k", store.NoVersion, v1)
	mustRead(t, s, "d/k")
	if err := s.DeleteCAS(ctx, "d/k", v1); err != nil {
		t.Fatalf("DeleteCAS: %v", err)
	}
	if _, err := s.Read(ctx, "d/k"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Read after delete: %v, want ErrNotFound", err)
	}
	if err := s.DeleteCAS(ctx, "d/k", v1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	_, err := s.WriteCAS(ctx, "d/k", []byte("w"), v1)
	wantCAS(t, err, "d/k", v1, store.NoVersion)
	entries, rev, err := s.List(ctx, "d")
	if err != nil || len(entries) != 0 {
		t.Fatalf("List after delete = %v, %v", entries, err)
	}
	if rev <= v1 {
		t.Fatalf("the delete did not take a revision: listed at %s after writing %s", rev, v1)
	}
	if v2 := mustWrite(t, s, "d/k", "again", store.NoVersion); v2 <= rev {
		t.Fatalf("re-created at %s, not after the delete's revision %s", v2, rev)
	}
}

func testVersionsIncrease(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	last := store.NoVersion
	cur := map[string]store.Version{}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 60 {
		key := fmt.Sprintf("v/%d", rng.IntN(5))
		if v, ok := cur[key]; ok && rng.IntN(3) == 0 {
			if err := s.DeleteCAS(ctx, key, v); err != nil {
				t.Fatalf("step %d: DeleteCAS(%q): %v", i, key, err)
			}
			delete(cur, key)
			_, rev, err := s.List(ctx, "v")
			if err != nil {
				t.Fatal(err)
			}
			if rev <= last {
				t.Fatalf("step %d: revision %s after a delete, not after %s", i, rev, last)
			}
			last = rev
			continue
		}
		v := mustWrite(t, s, key, fmt.Sprint(i), cur[key])
		if v <= last {
			t.Fatalf("step %d: version %s after %s", i, v, last)
		}
		last, cur[key] = v, v
	}
	entries, rev, err := s.List(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	if rev < last {
		t.Fatalf("listed at revision %s, before the last write %s", rev, last)
	}
	for _, e := range entries {
		if cur[e.Key] != e.Version {
			t.Fatalf("listed %s@%s, want version %s", e.Key, e.Version, cur[e.Key])
		}
	}
	if len(entries) != len(cur) {
		t.Fatalf("listed %d entries, want %d", len(entries), len(cur))
	}
}

func keysOf(entries []store.Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Key)
	}
	return out
}

func testListPrefix(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	var maxV store.Version
	for _, k := range []string{"a/b", "a/b/c", "a/b/d/e", "a/bc", "a/bc/x", "b/x", "/abs/x", "/abs/y/z"} {
		maxV = max(maxV, mustWrite(t, s, k, "value of "+k, store.NoVersion))
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"a/b", []string{"a/b/c", "a/b/d/e"}},
		{"a/b/", []string{"a/b/c", "a/b/d/e"}},
		{"a", []string{"a/b", "a/b/c", "a/b/d/e", "a/bc", "a/bc/x"}},
		{"a/bc", []string{"a/bc/x"}},
		{"/abs", []string{"/abs/x", "/abs/y/z"}},
		{"/", []string{"/abs/x", "/abs/y/z"}},
		{"", []string{"/abs/x", "/abs/y/z", "a/b", "a/b/c", "a/b/d/e", "a/bc", "a/bc/x", "b/x"}},
		{"a/b/c", nil},
		{"nothing/here", nil},
	} {
		entries, rev, err := s.List(ctx, tc.prefix)
		if err != nil {
			t.Fatalf("List(%q): %v", tc.prefix, err)
		}
		if got := keysOf(entries); !slices.Equal(got, tc.want) {
			t.Errorf("List(%q) = %q, want %q", tc.prefix, got, tc.want)
		}
		if rev < maxV {
			t.Errorf("List(%q) at revision %s, before the last write %s", tc.prefix, rev, maxV)
		}
		for _, e := range entries {
			if string(e.Value) != "value of "+e.Key || e.Version == store.NoVersion {
				t.Errorf("List(%q): %s = %q@%s", tc.prefix, e.Key, e.Value, e.Version)
			}
		}
	}
}

// testListKeys: ListKeys lists what List lists, at the same versions,
// without values; after a replace and a delete too.
func testListKeys(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	for _, k := range []string{"a/b", "a/b/c", "a/b/d/e", "a/bc/x", "b/x"} {
		mustWrite(t, s, k, "value of "+k, store.NoVersion)
	}
	e := mustRead(t, s, "a/b/c")
	mustWrite(t, s, "a/b/c", "new value", e.Version)
	e = mustRead(t, s, "a/b/d/e")
	if err := s.DeleteCAS(ctx, e.Key, e.Version); err != nil {
		t.Fatal(err)
	}
	last := mustWrite(t, s, "a/b/f", strings.Repeat("x", 100_000), store.NoVersion)
	for _, prefix := range []string{"a/b", "a", "", "b", "nothing"} {
		full, frev, err := s.List(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		keys, krev, err := s.ListKeys(ctx, prefix)
		if err != nil {
			t.Fatalf("ListKeys(%q): %v", prefix, err)
		}
		if krev < last || krev != frev {
			t.Errorf("ListKeys(%q) at revision %s, List at %s, last write %s", prefix, krev, frev, last)
		}
		if len(keys) != len(full) {
			t.Fatalf("ListKeys(%q) = %q, List %q", prefix, keysOf(keys), keysOf(full))
		}
		for i, k := range keys {
			if k.Key != full[i].Key || k.Version != full[i].Version || k.Value != nil {
				t.Errorf("ListKeys(%q)[%d] = %s@%s (value %d bytes), List has %s@%s", prefix, i, k.Key, k.Version, len(k.Value), full[i].Key, full[i].Version)
			}
		}
	}
	if _, _, err := s.ListKeys(ctx, "a//b"); !errors.Is(err, store.ErrInvalidKey) {
		t.Errorf("ListKeys(%q) = %v, want ErrInvalidKey", "a//b", err)
	}
}

func testInvalidKeys(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	for _, k := range []string{"", "a//b", "a/", "/", "//a", "a/../b", "./a", "a/.", "a\x00b", "a\nb", "\xff\xfe", string(make([]byte, store.MaxKeyLen+1))} {
		if _, err := s.WriteCAS(ctx, k, []byte("x"), store.NoVersion); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("WriteCAS(%q): %v, want ErrInvalidKey", k, err)
		}
		if _, err := s.Read(ctx, k); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Read(%q): %v, want ErrInvalidKey", k, err)
		}
		if err := s.DeleteCAS(ctx, k, 1); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("DeleteCAS(%q): %v, want ErrInvalidKey", k, err)
		}
	}
	for _, p := range []string{"a//", "a//b", "..", "a\x00", "//"} {
		if _, _, err := s.List(ctx, p); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("List(%q): %v, want ErrInvalidKey", p, err)
		}
		if _, err := s.Watch(ctx, p, store.NoVersion); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Watch(%q): %v, want ErrInvalidKey", p, err)
		}
	}
	if entries, _, err := s.List(ctx, ""); err != nil || len(entries) != 0 {
		t.Fatalf("invalid writes left %q (%v)", keysOf(entries), err)
	}
	_, err := s.WriteCAS(ctx, "a//b", nil, store.NoVersion)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte(`"a//b"`)) {
		t.Errorf("the error %q does not name the key", err)
	}
}

func testLargeValue(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	w, err := s.Watch(ctx, "big", store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != store.Synced {
		t.Fatalf("first event on an empty prefix: %v", ev)
	}
	big := make([]byte, 1<<20+4096)
	rand.NewChaCha8([32]byte{3, 4}).Read(big)
	v := mustWrite(t, s, "big/value", string(big), store.NoVersion)
	if e := mustRead(t, s, "big/value"); !bytes.Equal(e.Value, big) || e.Version != v {
		t.Fatalf("read back %d bytes @%s, want %d bytes @%s", len(e.Value), e.Version, len(big), v)
	}
	entries, _, err := s.List(ctx, "big")
	if err != nil || len(entries) != 1 || !bytes.Equal(entries[0].Value, big) {
		t.Fatalf("List of a large value: %d entries, %v", len(entries), err)
	}
	if ev := next(t, w); ev.Type != store.Put || !bytes.Equal(ev.Entry.Value, big) || ev.Entry.Version != v {
		t.Fatalf("watch event %v@%s with %d bytes", ev.Type, ev.Entry.Version, len(ev.Entry.Value))
	}
}

// next returns the next event of w, failing the test if the watch ends
// or nothing comes for eventWait.
func next(t *testing.T, w *store.Watch) store.Event {
	t.Helper()
	select {
	case ev, ok := <-w.C:
		if !ok {
			t.Fatalf("the watch ended: %v", w.Err())
		}
		return ev
	case <-time.After(eventWait):
		t.Fatalf("no watch event for %v", eventWait)
	}
	panic("unreachable")
}

func describe(ev store.Event) string {
	return fmt.Sprintf("%s %s@%s %q", ev.Type, ev.Entry.Key, ev.Entry.Version, ev.Entry.Value)
}

func wantEvent(t *testing.T, w *store.Watch, typ store.EventType, key, value string, v store.Version) {
	t.Helper()
	ev := next(t, w)
	want := store.Event{Type: typ, Entry: store.Entry{Key: key, Value: []byte(value), Version: v}}
	if typ != store.Put {
		want.Entry.Value = nil
	}
	if ev.Type != want.Type || ev.Entry.Key != key || ev.Entry.Version != v || !bytes.Equal(ev.Entry.Value, want.Entry.Value) {
		t.Fatalf("got %s, want %s", describe(ev), describe(want))
	}
}

func testWatchSnapshotThenChanges(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	va1 := mustWrite(t, s, "w/a/1", "a1", store.NoVersion)
	va2 := mustWrite(t, s, "w/a/2", "a2", store.NoVersion)
	mustWrite(t, s, "w/ab", "not under w/a", store.NoVersion)
	mustWrite(t, s, "w/b/1", "b1", store.NoVersion)
	_, rev, err := s.List(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx, "w/a", store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	wantEvent(t, w, store.Put, "w/a/1", "a1", va1)
	wantEvent(t, w, store.Put, "w/a/2", "a2", va2)
	if ev := next(t, w); ev.Type != store.Synced || ev.Entry.Version < rev {
		t.Fatalf("got %s, want synced at %s or later", describe(ev), rev)
	}
	va3 := mustWrite(t, s, "w/a/3", "a3", store.NoVersion)
	mustWrite(t, s, "w/b/2", "b2", store.NoVersion)
	mustWrite(t, s, "w/ab2", "not under w/a", store.NoVersion)
	va1b := mustWrite(t, s, "w/a/1", "a1 again", va1)
	if err := s.DeleteCAS(ctx, "w/a/2", va2); err != nil {
		t.Fatal(err)
	}
	va4 := mustWrite(t, s, "w/a/deep/4", "a4", store.NoVersion)
	wantEvent(t, w, store.Put, "w/a/3", "a3", va3)
	wantEvent(t, w, store.Put, "w/a/1", "a1 again", va1b)
	ev := next(t, w)
	if ev.Type != store.Delete || ev.Entry.Key != "w/a/2" || ev.Entry.Version <= va1b || ev.Entry.Version >= va4 || ev.Entry.Value != nil {
		t.Fatalf("got %s, want the delete of w/a/2 between %s and %s", describe(ev), va1b, va4)
	}
	wantEvent(t, w, store.Put, "w/a/deep/4", "a4", va4)
}

// write is one write made by a test's writers, as the store answered it.
type write struct {
	key, value string
	v          store.Version
	del        bool
}

// writers runs n writers each making m writes under dir: creates of their
// own keys, replaces of them, deletes (if deletes), and CAS loops on one
// key they share. It returns every write that succeeded, and sends on
// progress after each if it is not nil.
func writers(t *testing.T, s store.Store, dir string, n, m int, deletes bool, progress chan<- struct{}) []write {
	ctx := ctxT(t)
	var mu sync.Mutex
	var out []write
	record := func(w write) {
		mu.Lock()
		out = append(out, w)
		mu.Unlock()
		if progress != nil {
			progress <- struct{}{}
		}
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			own := fmt.Sprintf("%s/own-%d", dir, i)
			var ownV store.Version
			for j := range m {
				op := j % 4
				if op == 2 && !deletes {
					op = 1
				}
				switch op {
				case 0, 1:
					val := fmt.Sprintf("w%d-%d", i, j)
					v, err := s.WriteCAS(ctx, own, []byte(val), ownV)
					if err != nil {
						t.Errorf("writer %d: %v", i, err)
						return
					}
					ownV = v
					record(write{key: own, value: val, v: v})
				case 2:
					if err := s.DeleteCAS(ctx, own, ownV); err != nil {
						t.Errorf("writer %d: %v", i, err)
						return
					}
					ownV = store.NoVersion
					record(write{key: own, del: true})
				case 3:
					shared := dir + "/shared"
					for {
						cur, err := s.Read(ctx, shared)
						if err != nil && !errors.Is(err, store.ErrNotFound) {
							t.Errorf("writer %d: %v", i, err)
							return
						}
						val := fmt.Sprintf("w%d-%d", i, j)
						v, err := s.WriteCAS(ctx, shared, []byte(val), cur.Version)
						if errors.Is(err, store.ErrCASFailed) {
							continue
						}
						if err != nil {
							t.Errorf("writer %d: %v", i, err)
							return
						}
						record(write{key: shared, value: val, v: v})
						break
					}
				}
			}
		})
	}
	wg.Wait()
	return out
}

// collect reads w's changes until it has seen every put of writes (a
// delete's version is not known to its writer) and the deletes, and
// checks that it saw each write exactly once, in revision order.
func collect(t *testing.T, w *store.Watch, writes []write, after store.Version) {
	t.Helper()
	puts := map[store.Version]write{}
	dels := map[string]int{}
	for _, wr := range writes {
		if wr.del {
			dels[wr.key]++
		} else if wr.v > after {
			puts[wr.v] = wr
		}
	}
	seen := map[store.Version]bool{}
	prev := after
	sawDels := map[string]int{}
	for len(seen) < len(puts) || !mapsEqual(sawDels, dels) {
		ev := next(t, w)
		if ev.Entry.Version <= prev {
			t.Fatalf("%s after revision %s: out of order or twice", describe(ev), prev)
		}
		prev = ev.Entry.Version
		switch ev.Type {
		case store.Put:
			wr, ok := puts[ev.Entry.Version]
			if !ok || wr.key != ev.Entry.Key || wr.value != string(ev.Entry.Value) {
				t.Fatalf("%s is no write made after %s (%+v)", describe(ev), after, wr)
			}
			seen[ev.Entry.Version] = true
		case store.Delete:
			sawDels[ev.Entry.Key]++
			if sawDels[ev.Entry.Key] > dels[ev.Entry.Key] {
				t.Fatalf("%s: more deletes of the key than were made", describe(ev))
			}
		default:
			t.Fatalf("unexpected %s", describe(ev))
		}
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func testWatchOrderConcurrent(t *testing.T, s store.Store) {
	w, err := s.Watch(ctxT(t), "conc", store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != store.Synced {
		t.Fatalf("first event on an empty prefix: %s", describe(ev))
	}
	writes := writers(t, s, "conc", 4, 24, true, nil)
	if t.Failed() {
		return
	}
	collect(t, w, writes, store.NoVersion)
	// Nothing more comes: a write after them all is the next event.
	v := mustWrite(t, s, "conc/last", "last", store.NoVersion)
	wantEvent(t, w, store.Put, "conc/last", "last", v)
}

func testWatchBetweenWrites(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	progress := make(chan struct{})
	done := make(chan []write)
	go func() { done <- writers(t, s, "mid", 3, 40, false, progress) }()
	for range 30 {
		<-progress
	}
	w, err := s.Watch(ctx, "mid", store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range progress {
		}
	}()
	// The snapshot, then the changes after it, while the writers go on.
	state := map[string]store.Entry{}
	var synced store.Version
	for synced == store.NoVersion {
		ev := next(t, w)
		switch ev.Type {
		case store.Put:
			if _, dup := state[ev.Entry.Key]; dup {
				t.Fatalf("the snapshot has %s twice", ev.Entry.Key)
			}
			state[ev.Entry.Key] = ev.Entry
		case store.Synced:
			synced = ev.Entry.Version
		default:
			t.Fatalf("unexpected %s in the snapshot", describe(ev))
		}
	}
	writes := <-done
	close(progress)
	if t.Failed() {
		return
	}
	// The snapshot is the writes up to its revision, replayed; the
	// changes are the writes after it, each once, in order.
	slices.SortFunc(writes, func(a, b write) int { return cmp.Compare(a.v, b.v) })
	want := map[string]store.Entry{}
	var after []write
	for _, wr := range writes {
		if wr.v <= synced {
			want[wr.key] = store.Entry{Key: wr.key, Value: []byte(wr.value), Version: wr.v}
		} else {
			after = append(after, wr)
		}
	}
	if len(after) == 0 || len(want) == 0 {
		t.Logf("the watch started at %s, with %d writes after it", synced, len(after))
	}
	for key, e := range want {
		got, ok := state[key]
		if !ok || got.Version != e.Version || !bytes.Equal(got.Value, e.Value) {
			t.Errorf("snapshot at %s: %s = %q@%s (present %v), want %q@%s", synced, key, got.Value, got.Version, ok, e.Value, e.Version)
		}
	}
	for key, got := range state {
		if _, ok := want[key]; !ok {
			t.Errorf("snapshot at %s holds %s@%s, not written by then", synced, key, got.Version)
		}
	}
	collect(t, w, after, synced)
}

func testWatchFromVersion(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	v1 := mustWrite(t, s, "f/1", "one", store.NoVersion)
	v2 := mustWrite(t, s, "f/2", "two", store.NoVersion)
	v1b := mustWrite(t, s, "f/1", "one again", v1)
	if err := s.DeleteCAS(ctx, "f/2", v2); err != nil {
		t.Fatal(err)
	}
	v3 := mustWrite(t, s, "f/3", "three", store.NoVersion)
	w, err := s.Watch(ctx, "f", v2)
	if err != nil {
		t.Fatal(err)
	}
	wantEvent(t, w, store.Put, "f/1", "one again", v1b)
	if ev := next(t, w); ev.Type != store.Delete || ev.Entry.Key != "f/2" || ev.Entry.Version <= v1b || ev.Entry.Version >= v3 {
		t.Fatalf("got %s, want the delete of f/2", describe(ev))
	}
	wantEvent(t, w, store.Put, "f/3", "three", v3)
	v4 := mustWrite(t, s, "f/4", "four", store.NoVersion)
	wantEvent(t, w, store.Put, "f/4", "four", v4)

	// From the newest revision: only what comes next.
	w2, err := s.Watch(ctx, "f", v4)
	if err != nil {
		t.Fatal(err)
	}
	v5 := mustWrite(t, s, "f/5", "five", store.NoVersion)
	wantEvent(t, w2, store.Put, "f/5", "five", v5)
}

func testWatchCancel(t *testing.T, s store.Store) {
	mustWrite(t, s, "c/1", "one", store.NoVersion)
	ctx, cancel := context.WithCancel(ctxT(t))
	w, err := s.Watch(ctx, "c", store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	next(t, w) // c/1
	cancel()
	for range w.C { // the synced event may or may not come
	}
	if err := w.Err(); !errors.Is(err, context.Canceled) || errors.Is(err, store.ErrWatchClosed) {
		t.Fatalf("a cancelled watch ended with %v, want context.Canceled", err)
	}
	// Cancelled before it delivered anything.
	ctx2, cancel2 := context.WithCancel(ctxT(t))
	w2, err := s.Watch(ctx2, "c", store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	cancel2()
	<-w2.Done()
	if err := w2.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled watch ended with %v, want context.Canceled", err)
	}
	// The store still works.
	mustWrite(t, s, "c/2", "two", store.NoVersion)
}

func testLeases(t *testing.T, s store.Store) {
	l, ok := s.(store.Leaser)
	if !ok {
		t.Skipf("%T has no leases (store.Leaser)", s)
	}
	ctx := ctxT(t)
	id, err := l.GrantLease(ctx, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx, "status", store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	next(t, w) // synced
	v, err := l.WriteLeased(ctx, "status/h1", []byte("ready"), store.NoVersion, id)
	if err != nil {
		t.Fatal(err)
	}
	wantEvent(t, w, store.Put, "status/h1", "ready", v)
	_, err = l.WriteLeased(ctx, "status/h1", []byte("again"), store.NoVersion, id)
	wantCAS(t, err, "status/h1", store.NoVersion, v)
	if err := l.KeepAlive(ctx, id); err != nil {
		t.Fatalf("KeepAlive: %v", err)
	}
	if err := l.RevokeLease(ctx, id); err != nil {
		t.Fatalf("RevokeLease: %v", err)
	}
	if ev := next(t, w); ev.Type != store.Delete || ev.Entry.Key != "status/h1" || ev.Entry.Version <= v {
		t.Fatalf("got %s, want the delete of status/h1 at the lease's end", describe(ev))
	}
	if _, err := s.Read(ctx, "status/h1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Read after the lease's end: %v", err)
	}
	if err := l.KeepAlive(ctx, id); !errors.Is(err, store.ErrLeaseExpired) {
		t.Fatalf("KeepAlive of a revoked lease: %v, want ErrLeaseExpired", err)
	}
	if _, err := l.WriteLeased(ctx, "status/h1", []byte("x"), store.NoVersion, id); !errors.Is(err, store.ErrLeaseExpired) {
		t.Fatalf("WriteLeased on a revoked lease: %v, want ErrLeaseExpired", err)
	}
}

func testCompaction(t *testing.T, s store.Store) {
	c, ok := s.(store.Compactor)
	if !ok {
		t.Skipf("%T cannot compact (store.Compactor)", s)
	}
	ctx := ctxT(t)
	v1 := mustWrite(t, s, "cp/k", "1", store.NoVersion)
	v2 := mustWrite(t, s, "cp/k", "2", v1)
	other := mustWrite(t, s, "cp/other", "o", store.NoVersion)
	if err := c.Compact(ctx, other); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	w, err := s.Watch(ctx, "cp", v1)
	if err != nil {
		t.Fatal(err)
	}
	for ev := range w.C {
		t.Errorf("a watch from a compacted revision delivered %s", describe(ev))
	}
	if err := w.Err(); !errors.Is(err, store.ErrWatchClosed) {
		t.Fatalf("a watch from a compacted revision ended with %v, want ErrWatchClosed", err)
	}
	// What was live stays, and so does a watch from the compaction on.
	entries, _, err := s.List(ctx, "cp")
	if err != nil || len(entries) != 2 || entries[0].Version != v2 || string(entries[0].Value) != "2" {
		t.Fatalf("after the compaction: %v, %v", entries, err)
	}
	w2, err := s.Watch(ctx, "cp", other)
	if err != nil {
		t.Fatal(err)
	}
	v3 := mustWrite(t, s, "cp/k", "3", v2)
	wantEvent(t, w2, store.Put, "cp/k", "3", v3)
	// From NoVersion, a watch always works.
	w3, err := s.Watch(ctx, "cp", store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	wantEvent(t, w3, store.Put, "cp/k", "3", v3)
	wantEvent(t, w3, store.Put, "cp/other", "o", other)
}
