package versions

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// copyState copies testdata/v1state, a state directory written by the
// former format (one file per version: four by the streamed encoding, one
// by json.MarshalIndent, and a crashed writer's temporary file), into a
// temporary directory.
func copyState(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/v1state")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// wantFormerVersions checks that s holds the versions of testdata/v1state.
func wantFormerVersions(t *testing.T, s *Local) {
	t.Helper()
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	sources := []string{"apply a.json #1", "apply a.json #2", "apply a.json #3", "rollback 1", "daemon: files a.json,b.json"}
	if len(list) != len(sources) {
		t.Fatalf("listed %+v, want 5 versions", list)
	}
	for i, m := range list {
		if m.Number != i+1 || m.Source != sources[i] || !m.Time.Equal(base.Add(time.Duration(i+1)*time.Minute)) {
			t.Errorf("version %d: %+v", i+1, m)
		}
		v, err := s.Read(m.Number)
		if err != nil || v.Digest != m.Digest || Digest(v.Intent) != v.Digest {
			t.Fatalf("read %d: %+v %v", m.Number, v, err)
		}
	}
	if list[3].Digest != list[0].Digest {
		t.Errorf("rollback 1 has digest %s, version 1 %s", list[3].Digest, list[0].Digest)
	}
	v5, _ := s.Read(5)
	if !slices.Equal(v5.Documents, []string{"a.json", "b.json"}) || string(v5.Intent) != `{"version":1,"sysctls":{"net.ipv4.conf.all.rp_filter":"2","net.ipv4.ip_forward":"1"}}` {
		t.Errorf("version 5: documents %q, intent %s", v5.Documents, v5.Intent)
	}
	if cur, err := s.Current(); err != nil || cur.Number != 5 {
		t.Errorf("current: %+v %v", cur, err)
	}
}

// A state directory written by the former format is read by the new
// code: its versions, numbers, times, sources, documents and intents are
// migrated into the store on the first open, the former directory goes,
// and numbering goes on from the newest.
func TestMigratesFormerStateDir(t *testing.T) {
	dir := copyState(t)
	s := Open(dir, 0)
	wantFormerVersions(t, s)
	if _, err := os.Stat(filepath.Join(dir, Dir)); !os.IsNotExist(err) {
		t.Fatalf("the former versions' directory is still there: %v", err)
	}
	s.Close()
	s = Open(dir, 0) // from the store alone
	wantFormerVersions(t, s)
	again, _ := s.Read(5)
	if cur, isNew, err := s.Write(*again, 5); err != nil || isNew || cur.Number != 5 {
		t.Fatalf("version 5's intent again: %+v new %v %v", cur, isNew, err)
	}
	if cur, isNew, err := s.Write(version(t, 9), 5); err != nil || !isNew || cur.Number != 6 {
		t.Fatalf("next version: %+v new %v %v", cur, isNew, err)
	}
}

// The newest Keep versions are migrated; a migration that crashed after
// writing the index, before removing the former directory, or that
// another process runs at the same time, imports nothing twice.
func TestMigrationKeepCrashAndRace(t *testing.T) {
	dir := copyState(t)
	if got := numbers(t, Open(dir, 2)); !slices.Equal(got, []int{4, 5}) {
		t.Fatalf("keep 2: migrated %v", got)
	}

	dir = copyState(t)
	s := Open(dir, 0)
	wantFormerVersions(t, s)
	s.Close()
	if err := os.CopyFS(dir, os.DirFS("testdata/v1state")); err != nil { // as if never removed
		t.Fatal(err)
	}
	s = Open(dir, 0)
	wantFormerVersions(t, s)

	dir = copyState(t)
	var wg sync.WaitGroup
	stores := make([]*Local, 4)
	for i := range stores {
		stores[i] = Open(dir, 0)
		wg.Go(func() {
			if _, err := stores[i].List(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, s := range stores {
		wantFormerVersions(t, s)
	}
}

// Reading a state directory with no versions makes nothing in it.
func TestReadMakesNothing(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir, 0)
	if cur, err := s.Current(); cur != nil || err != nil {
		t.Fatalf("current: %v %v", cur, err)
	}
	if list, err := s.List(); len(list) != 0 || err != nil {
		t.Fatalf("list: %v %v", list, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("reading made %v", entries)
	}
}
