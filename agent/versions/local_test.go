package versions

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/netagent/netagent/agent/render"
	dg "github.com/netagent/netagent/depgraph"
)

func doc(i int) []byte {
	return fmt.Appendf(nil, `{"version": 1, "sysctls": {"net.ipv4.conf.all.rp_filter": "%d"}}`, i)
}

func version(t *testing.T, i int) Version {
	t.Helper()
	v, err := New(fmt.Sprintf("apply %d", i), map[string][]byte{"a.json": doc(i)})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func numbers(t *testing.T, s *Local) []int {
	t.Helper()
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, m := range list {
		out = append(out, m.Number)
	}
	return out
}

// Versions are numbered from 1; the same digest again makes none; the
// source and the intent are read back as written.
func TestWriteReadDedup(t *testing.T) {
	s := Open(t.TempDir(), 0)
	for i, want := range []struct {
		doc    int
		number int
		isNew  bool
	}{{1, 1, true}, {2, 2, true}, {2, 2, false}, {1, 3, true}} {
		got, isNew, err := s.Write(version(t, want.doc), Any)
		if err != nil || got.Number != want.number || isNew != want.isNew {
			t.Fatalf("write %d: got %v new %v err %v, want %d new %v", i, got.Number, isNew, err, want.number, want.isNew)
		}
	}
	v, err := s.Read(2)
	if err != nil || v.Source != "apply 2" || v.Digest != Digest(v.Intent) || !slices.Equal(v.Documents, []string{"a.json"}) {
		t.Fatalf("read 2: %+v %v", v, err)
	}
	if _, err := s.Read(9); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read 9: %v", err)
	}
	cur, _ := s.Current()
	if cur.Number != 3 || cur.Digest == v.Digest {
		t.Fatalf("current %+v", cur.Meta())
	}
}

// Pruning keeps the newest Keep versions, and numbers go on from the
// newest: never given again.
func TestPruneAndNumbering(t *testing.T) {
	s := Open(t.TempDir(), 3)
	for i := range 7 {
		if _, _, err := s.Write(version(t, i), Any); err != nil {
			t.Fatal(err)
		}
	}
	if got := numbers(t, s); fmt.Sprint(got) != "[5 6 7]" {
		t.Fatalf("kept %v, want [5 6 7]", got)
	}
	s = Open(s.stateDir, 1)
	v, _, err := s.Write(version(t, 100), Any)
	if err != nil || v.Number != 8 || fmt.Sprint(numbers(t, s)) != "[8]" {
		t.Fatalf("after pruning to 1: %v %v %v", v.Number, numbers(t, s), err)
	}
	v, _, _ = s.Write(version(t, 101), Any)
	if v.Number != 9 {
		t.Fatalf("numbered %d after pruning, want 9", v.Number)
	}
}

// Compare-and-swap: a write expecting another current version is refused
// with the numbers; 0 expects no version at all.
func TestWriteExpect(t *testing.T) {
	s := Open(t.TempDir(), 0)
	if _, _, err := s.Write(version(t, 1), 1); !errors.Is(err, ErrConflict) {
		t.Fatalf("expect 1 on an empty store: %v", err)
	}
	if _, _, err := s.Write(version(t, 1), 0); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.Write(version(t, 2), 0)
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Current != 1 || ce.Expected != 0 ||
		err.Error() != "current version is 1, not 0: someone else changed the intent; see netagent history" {
		t.Fatalf("stale expect: %v", err)
	}
	if err := Check(s, 1); err != nil {
		t.Fatal(err)
	}
	if err := Check(s, 7); !errors.Is(err, ErrConflict) {
		t.Fatal(err)
	}
}

// Concurrent writers, each with its own store value as separate processes
// have: no number lost or given twice; with the same expected number,
// exactly one wins.
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	const n = 16
	var wg sync.WaitGroup
	got := make([]int, n)
	for i := range n {
		wg.Go(func() {
			v, isNew, err := Open(dir, 0).Write(version(t, i), Any)
			if err != nil || !isNew {
				t.Errorf("writer %d: %v new %v", i, err, isNew)
				return
			}
			got[i] = v.Number
		})
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, num := range got {
		if seen[num] || num < 1 || num > n {
			t.Fatalf("numbers %v", got)
		}
		seen[num] = true
	}
	wins := make([]bool, n)
	for i := range n {
		wg.Go(func() {
			_, _, err := Open(dir, 0).Write(version(t, 100+i), n)
			switch {
			case err == nil:
				wins[i] = true
			case !errors.Is(err, ErrConflict):
				t.Errorf("writer %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	won := 0
	for _, w := range wins {
		if w {
			won++
		}
	}
	if won != 1 {
		t.Fatalf("%d writers won the race for version %d, want 1", won, n+1)
	}
}

// The canonical intent renders to the same items as the files it was
// merged from, for every example.
func TestCanonicalRendersTheSame(t *testing.T) {
	dirs, _ := filepath.Glob("../../examples/*.json")
	if len(dirs) == 0 {
		t.Skip("no examples")
	}
	for _, path := range dirs {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{"a.json": raw}
		want, err := render.Load(files)
		if err != nil {
			continue // an example of a bad intent
		}
		v, err := New("test", files)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		got, err := render.Load(map[string][]byte{"v.json": v.Intent})
		if err != nil {
			t.Fatalf("%s: the canonical intent does not render: %v\n%s", path, err, v.Intent)
		}
		sameItems(t, path, want, got)
	}
}

func sameItems(t *testing.T, name string, want, got *dg.Graph) {
	t.Helper()
	if len(want.Refs()) != len(got.Refs()) {
		t.Fatalf("%s: %d items, want %d", name, len(got.Refs()), len(want.Refs()))
	}
	for _, ref := range want.Refs() {
		w, _ := want.Get(ref)
		g, ok := got.Get(ref)
		if !ok || !g.Equal(w) {
			t.Errorf("%s: %s: got %v, want %v", name, ref, g, w)
		}
	}
}

// A rollback records the old intent, digest and all, as a new version;
// the canonical intent is its own canonical form, so applying it again as
// a file makes no new version.
func TestRollback(t *testing.T) {
	s := Open(t.TempDir(), 0)
	if _, _, err := Rollback(s, 0, Any); !errors.Is(err, ErrNotFound) {
		t.Fatalf("rollback with no versions: %v", err)
	}
	v1, _, _ := s.Write(version(t, 1), Any)
	s.Write(version(t, 2), Any)
	if _, _, err := Rollback(s, 0, 1); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale rollback: %v", err)
	}
	back, cur, err := Rollback(s, 0, 2)
	if err != nil || back.Number != 1 || cur.Number != 3 || cur.Source != "rollback 1" || cur.Digest != v1.Digest {
		t.Fatalf("rollback: %+v %+v %v", back, cur, err)
	}
	if _, isNew, err := Record(s, "apply again", map[string][]byte{"x.json": back.Intent}, Any); err != nil || isNew {
		t.Fatalf("the canonical intent as a file made a new version: %v %v", isNew, err)
	}
	if _, cur, _ = Rollback(s, 3, Any); cur.Number != 3 {
		t.Fatalf("a rollback to the current intent made version %d", cur.Number)
	}
}

// A write of the current version's digest returns the current version as
// Read gives it (its number, time, source, documents and intent, not the
// new ones), whether it lists documents or not (a rollback), and
// whoever wrote it (a version of the former format, migrated).
func TestWriteUnchangedReturnsCurrent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(s *Local) error
	}{
		{"documents", func(s *Local) error { _, _, err := s.Write(version(t, 1), Any); return err }},
		{"rollback", func(s *Local) error {
			_, _, err := s.Write(RollbackTo(&Version{Number: 7, Intent: version(t, 1).Intent, Digest: version(t, 1).Digest}), Any)
			return err
		}},
		{"marshal", func(s *Local) error {
			// A version of the former format (json.Marshal puts the
			// documents after the intent), migrated.
			v := version(t, 1)
			v.Number = 1
			data, err := json.Marshal(v)
			if err == nil {
				err = os.MkdirAll(filepath.Join(s.stateDir, Dir), 0o700)
			}
			if err == nil {
				err = os.WriteFile(filepath.Join(s.stateDir, Dir, "00000001.json"), data, 0o600)
			}
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Open(t.TempDir(), 0)
			if err := tc.write(s); err != nil {
				t.Fatal(err)
			}
			want, err := s.Read(1)
			if err != nil {
				t.Fatal(err)
			}
			again := version(t, 1)
			again.Source, again.Documents = "apply again", []string{"b.json"}
			got, isNew, err := s.Write(again, Any)
			if err != nil || isNew {
				t.Fatalf("write: new %v, %v", isNew, err)
			}
			if got.Number != want.Number || !got.Time.Equal(want.Time) || got.Source != want.Source || got.Digest != want.Digest ||
				!slices.Equal(got.Documents, want.Documents) || string(got.Intent) != string(want.Intent) {
				t.Errorf("write returned %+v\nwant %+v", got, want)
			}
		})
	}
}
