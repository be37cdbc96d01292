package statefile

import (
	"path/filepath"
	"testing"
)

// countSyncs counts the fsyncs of the writes f makes.
func countSyncs(t *testing.T, f func()) int {
	t.Helper()
	n := 0
	real := fsync
	fsync = func(fd int) error { n++; return real(fd) }
	defer func() { fsync = real }()
	f()
	return n
}

// A needed record is written durably (file and directory synced) even by
// a cache write: after a power cut an unsynced one may be found torn, and
// a torn needed record stops its readers until recover. A cache's record
// is not synced.
func TestNeededRecordIsAlwaysWrittenDurably(t *testing.T) {
	Register("needed-test.json", "what the test keeps")
	RegisterCache("cache-test.json", "a test cache")
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		write func(string) error
		want  int
	}{
		{"needed-test.json", func(p string) error { return CacheJSON(p, []int{1}) }, 2},
		{"needed-test.json", func(p string) error { return SaveRecord(p, []byte("[1]\n"), false) }, 2},
		{"needed-test.json", func(p string) error { return SaveJSON(p, []int{1}) }, 2},
		{"cache-test.json", func(p string) error { return CacheJSON(p, []int{1}) }, 0},
	} {
		path := filepath.Join(dir, c.name)
		var err error
		if got := countSyncs(t, func() { err = c.write(path) }); got != c.want || err != nil {
			t.Errorf("%s: a write made %d syncs (%v), want %d", c.name, got, err, c.want)
		}
	}
}
