package local_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/local"
	"github.com/netagent/netagent/store/storetest"
)

func open(t *testing.T, dir string, opts local.Options) *local.Store {
	t.Helper()
	s, err := local.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, t.TempDir(), local.Options{}) })
}

// Every value in a value file, none in the log.
func TestConformanceValueFiles(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, t.TempDir(), local.Options{InlineMax: -1}) })
}

// Two Store instances on one directory, as two processes would have:
// the operations alternate between them (racing writers hold different
// flocks) and the watches run on the second, so what crosses is the
// log, the lock and inotify.
func TestConformanceTwoInstances(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		dir := t.TempDir()
		return &pair{a: open(t, dir, local.Options{}), b: open(t, dir, local.Options{})}
	})
}

// The same with inotify off: the watching instance sees the other's
// writes by polling.
func TestConformancePolling(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		dir := t.TempDir()
		opts := local.Options{NoFSNotify: true, PollInterval: 5 * time.Millisecond}
		return &pair{a: open(t, dir, opts), b: open(t, dir, opts)}
	})
}

// pair is a store.Store over two instances on one directory.
type pair struct {
	a, b *local.Store
	n    atomic.Int64
}

func (p *pair) next() *local.Store {
	if p.n.Add(1)%2 == 0 {
		return p.a
	}
	return p.b
}

func (p *pair) Read(ctx context.Context, key string) (store.Entry, error) {
	return p.next().Read(ctx, key)
}

func (p *pair) WriteCAS(ctx context.Context, key string, value []byte, expect store.Version) (store.Version, error) {
	return p.next().WriteCAS(ctx, key, value, expect)
}

func (p *pair) DeleteCAS(ctx context.Context, key string, expect store.Version) error {
	return p.next().DeleteCAS(ctx, key, expect)
}

func (p *pair) List(ctx context.Context, prefix string) ([]store.Entry, store.Version, error) {
	return p.next().List(ctx, prefix)
}

func (p *pair) ListKeys(ctx context.Context, prefix string) ([]store.Entry, store.Version, error) {
	return p.next().ListKeys(ctx, prefix)
}

func (p *pair) Watch(ctx context.Context, prefix string, from store.Version) (*store.Watch, error) {
	return p.b.Watch(ctx, prefix, from)
}

func (p *pair) Compact(ctx context.Context, rev store.Version) error {
	return p.next().Compact(ctx, rev)
}

func (p *pair) Close() error { return errors.Join(p.a.Close(), p.b.Close()) }

func TestReopenKeepsDataAndRevision(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := open(t, dir, local.Options{})
	v1, err := s.WriteCAS(ctx, "k/a", []byte("a"), store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := s.WriteCAS(ctx, "k/b", []byte("b"), store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCAS(ctx, "k/b", v2); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(ctx, v2+1); err != nil {
		t.Fatal(err)
	}
	_, rev, _ := s.List(ctx, "")
	s.Close()

	s2 := open(t, dir, local.Options{})
	e, err := s2.Read(ctx, "k/a")
	if err != nil || string(e.Value) != "a" || e.Version != v1 {
		t.Fatalf("after reopening: %q@%s, %v", e.Value, e.Version, err)
	}
	if _, err := s2.Read(ctx, "k/b"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a deleted key after reopening: %v", err)
	}
	if _, rev2, _ := s2.List(ctx, ""); rev2 != rev {
		t.Fatalf("revision %s after reopening, was %s", rev2, rev)
	}
	v3, err := s2.WriteCAS(ctx, "k/b", []byte("b"), store.NoVersion)
	if err != nil || v3 <= rev {
		t.Fatalf("write after reopening: version %s (revision was %s), %v", v3, rev, err)
	}
}

// A writer that died in the middle of appending leaves a torn last line:
// readers ignore it and the next writer cuts it.
func TestTornLogLine(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := open(t, dir, local.Options{})
	v1, err := s.WriteCAS(ctx, "k", []byte("a"), store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, local.LogFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"op":"put","rev":2,"ke`)
	f.Close()
	s2 := open(t, dir, local.Options{})
	if e, err := s2.Read(ctx, "k"); err != nil || e.Version != v1 {
		t.Fatalf("Read with a torn log line: %v@%s, %v", e.Value, e.Version, err)
	}
	v2, err := s2.WriteCAS(ctx, "k", []byte("b"), v1)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := s.Read(ctx, "k"); err != nil || string(e.Value) != "b" || e.Version != v2 {
		t.Fatalf("Read after the torn line was cut: %q@%s, %v", e.Value, e.Version, err)
	}
}

func TestCompactionClosesWatches(t *testing.T) {
	ctx := t.Context()
	s := open(t, t.TempDir(), local.Options{})
	v1, _ := s.WriteCAS(ctx, "c/k", []byte("1"), store.NoVersion)
	v2, _ := s.WriteCAS(ctx, "c/k", []byte("2"), v1)
	if err := s.Compact(ctx, v2); err != nil {
		t.Fatal(err)
	}
	// A watch from before the compaction cannot get what it missed.
	old, err := s.Watch(ctx, "c", v1)
	if err != nil {
		t.Fatal(err)
	}
	for range old.C {
	}
	if err := old.Err(); !errors.Is(err, store.ErrWatchClosed) {
		t.Fatalf("a watch from a compacted revision ended with %v, want ErrWatchClosed", err)
	}
	// From the compaction's revision on, nothing is lost.
	w, err := s.Watch(ctx, "c", v2)
	if err != nil {
		t.Fatal(err)
	}
	v3, _ := s.WriteCAS(ctx, "c/k", []byte("3"), v2)
	if ev := <-w.C; ev.Type != store.Put || ev.Entry.Version != v3 || string(ev.Entry.Value) != "3" {
		t.Fatalf("after the compaction: %v %s@%s, %v", ev.Type, ev.Entry.Value, ev.Entry.Version, w.Err())
	}
	if e, err := s.Read(ctx, "c/k"); err != nil || string(e.Value) != "3" {
		t.Fatalf("Read after compaction: %q, %v", e.Value, err)
	}
}

// The log is compacted by itself once it holds twice Retain revisions;
// the live values stay and the replaced ones go.
func TestAutomaticCompaction(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := open(t, dir, local.Options{Retain: 5})
	var v store.Version
	for i := range 40 {
		var err error
		if v, err = s.WriteCAS(ctx, "k", []byte(strconv.Itoa(i)), v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.WriteCAS(ctx, "other", []byte("x"), store.NoVersion); err != nil {
		t.Fatal(err)
	}
	values, _ := os.ReadDir(filepath.Join(dir, local.ValuesDir))
	if len(values) > 2*5+2 {
		t.Fatalf("%d value files kept for 2 keys and a history of 5..10 revisions", len(values))
	}
	if e, err := s.Read(ctx, "k"); err != nil || string(e.Value) != "39" || e.Version != v {
		t.Fatalf("Read = %q@%s, %v", e.Value, e.Version, err)
	}
	if _, err := open(t, dir, local.Options{}).Read(ctx, "other"); err != nil {
		t.Fatal(err)
	}
}

// helperEnv makes the test binary a writer process (TestHelperWriter).
const helperEnv = "NETAGENT_STORE_LOCAL_WRITER"

// TestHelperWriter is the body of the writer processes of
// TestWritersInOtherProcesses; it does nothing in a normal run.
func TestHelperWriter(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		return
	}
	s := open(t, dir, local.Options{})
	n, _ := strconv.Atoi(os.Getenv(helperEnv + "_N"))
	increment(t, s, n)
}

// increment adds one to the counter n times, each by a read and a CAS.
func increment(t *testing.T, s store.Store, n int) {
	ctx := t.Context()
	for range n {
		for {
			e, err := s.Read(ctx, "counter")
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
			c, _ := strconv.Atoi(string(e.Value))
			_, err = s.WriteCAS(ctx, "counter", []byte(strconv.Itoa(c+1)), e.Version)
			if err == nil {
				break
			}
			if !errors.Is(err, store.ErrCASFailed) {
				t.Fatal(err)
			}
		}
	}
}

// Two other processes and this one increment a counter by CAS at once:
// no increment is lost, and a watch here sees every value once, in order.
func TestWritersInOtherProcesses(t *testing.T) {
	const perWriter = 40
	dir := t.TempDir()
	s := open(t, dir, local.Options{})
	w, err := s.Watch(t.Context(), "", store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-w.C; ev.Type != store.Synced {
		t.Fatalf("first event %v", ev.Type)
	}
	var procs []*exec.Cmd
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"="+dir, fmt.Sprintf("%s_N=%d", helperEnv, perWriter))
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	increment(t, open(t, dir, local.Options{}), perWriter)
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("writer process: %v", err)
		}
	}
	total := 3 * perWriter
	var last store.Version
	for want := 1; want <= total; want++ {
		var ev store.Event
		select {
		case ev = <-w.C:
		case <-time.After(time.Minute):
			t.Fatalf("no event for value %d", want)
		}
		if ev.Type != store.Put || string(ev.Entry.Value) != strconv.Itoa(want) || ev.Entry.Version <= last {
			t.Fatalf("event %v %q@%s after %s, want put %d", ev.Type, ev.Entry.Value, ev.Entry.Version, last, want)
		}
		last = ev.Entry.Version
	}
	if e, err := s.Read(t.Context(), "counter"); err != nil || string(e.Value) != strconv.Itoa(total) {
		t.Fatalf("counter = %q, %v; want %d", e.Value, err, total)
	}
}

// A value file removed behind the store's back is an error naming the
// key, not an endless retry.
func TestMissingValueFile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := open(t, dir, local.Options{InlineMax: -1})
	if _, err := s.WriteCAS(ctx, "k", []byte("a"), store.NoVersion); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, local.ValuesDir)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(ctx, "k"); err == nil || !strings.Contains(err.Error(), `"k"`) {
		t.Fatalf("Read with its value file gone: %v", err)
	}
	if _, _, err := s.List(ctx, ""); err == nil {
		t.Fatal("List with a value file gone succeeded")
	}
}

// Small values live in the log (no value file), large ones in value
// files; with DropReplaced a replaced or deleted value's file goes at
// once, and both kinds read back after a reopen and a compaction.
func TestInlineAndDropReplaced(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := open(t, dir, local.Options{InlineMax: 16, DropReplaced: true})
	files := func() int {
		entries, err := os.ReadDir(filepath.Join(dir, local.ValuesDir))
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	big := strings.Repeat("b", 17)
	vs, err := s.WriteCAS(ctx, "small", []byte("s"), store.NoVersion)
	if err != nil {
		t.Fatal(err)
	}
	vb, err := s.WriteCAS(ctx, "big", []byte(big), store.NoVersion)
	if err != nil || files() != 1 {
		t.Fatalf("after a small and a big write: %d value files, %v", files(), err)
	}
	if vb, err = s.WriteCAS(ctx, "big", []byte(big+"2"), vb); err != nil || files() != 1 {
		t.Fatalf("after replacing the big value: %d value files, %v", files(), err)
	}
	if _, err := s.WriteCAS(ctx, "gone", []byte(big), store.NoVersion); err != nil {
		t.Fatal(err)
	}
	e, _ := s.Read(ctx, "gone")
	if err := s.DeleteCAS(ctx, "gone", e.Version); err != nil || files() != 1 {
		t.Fatalf("after a delete: %d value files, %v", files(), err)
	}
	if err := s.Compact(ctx, vb); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*local.Store{s, open(t, dir, local.Options{})} {
		if e, err := st.Read(ctx, "small"); err != nil || string(e.Value) != "s" || e.Version != vs {
			t.Fatalf("small: %q@%s %v", e.Value, e.Version, err)
		}
		if e, err := st.Read(ctx, "big"); err != nil || string(e.Value) != big+"2" || e.Version != vb {
			t.Fatalf("big: %q@%s %v", e.Value, e.Version, err)
		}
	}
}

// A log replaced by a compaction can get the inode of the one a Store
// read (inodes are reused): the Store reads the new log from its start,
// not from where it had read the old one. Here the log is replaced in
// place, keeping its inode, by another store's compacted log.
func TestLogReplacedSameInode(t *testing.T) {
	ctx := t.Context()
	dir, other := t.TempDir(), t.TempDir()
	s := open(t, dir, local.Options{})
	o := open(t, other, local.Options{})
	for i := range 3 {
		if _, err := s.WriteCAS(ctx, fmt.Sprintf("k/%d", i), []byte("first log"), store.NoVersion); err != nil {
			t.Fatal(err)
		}
	}
	var last store.Version
	for i := range 6 {
		v, err := o.WriteCAS(ctx, "k/0", []byte(strconv.Itoa(i)), last)
		if err != nil {
			t.Fatal(err)
		}
		last = v
	}
	if err := o.Compact(ctx, last); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(other, local.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, local.LogFile), os.O_WRONLY|os.O_TRUNC, 0)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	entries, rev, err := s.List(ctx, "k")
	if err != nil || len(entries) != 1 || string(entries[0].Value) != "5" || rev != last {
		t.Fatalf("after the log was replaced: %+v at %s, %v", entries, rev, err)
	}
}
