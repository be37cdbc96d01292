package statefile_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/safefile"
	"github.com/netagent/netagent/internal/statefile"
)

// TestRecordDamageIsReported: a record read back whole is its payload;
// emptied, cut short, extended, with a changed byte or an unknown version
// it is ErrDamaged naming the file; plain JSON of the previous format is
// read; garbage without the header is damaged.
func TestRecordDamageIsReported(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "links.json")
	type rec struct{ MTU int }
	if err := statefile.SaveJSON(path, rec{1500}); err != nil {
		t.Fatal(err)
	}
	var got rec
	if ok, err := statefile.LoadJSON(path, &got); !ok || err != nil || got.MTU != 1500 {
		t.Fatalf("whole record: %+v, %v, %v", got, ok, err)
	}
	whole, _ := os.ReadFile(path)
	damages := map[string][]byte{
		"empty":                     nil,
		"truncated":                 whole[:len(whole)-3],
		"more than its header says": append(bytes.Clone(whole), "x"...),
		"checksum does not match":   bytes.Replace(whole, []byte("1500"), []byte("1400"), 1),
		"version \"2\"":             bytes.Replace(whole, []byte("netagent-state 1 "), []byte("netagent-state 2 "), 1),
		"neither a record":          []byte("{\"MTU\": 15"),
		"cut short in its header":   []byte("netagent-state 1 12"),
	}
	for reason, data := range damages {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := statefile.LoadJSON(path, &got)
		if !errors.Is(err, statefile.ErrDamaged) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), reason) {
			t.Errorf("%s: %v, want ErrDamaged naming %s", reason, err, path)
		}
	}
	if err := os.WriteFile(path, []byte(`{"MTU": 9000}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, err := statefile.LoadJSON(path, &got); !ok || err != nil || got.MTU != 9000 {
		t.Errorf("previous format: %+v, %v, %v", got, ok, err)
	}
}

// TestReadFileRefusesWhatOthersCouldWrite: a state file that is a
// symbolic link, or writable by its group, is refused; a state directory
// others can write is refused by PrepareDir with the reason, forged
// records and all.
func TestReadFileRefusesWhatOthersCouldWrite(t *testing.T) {
	dir := t.TempDir()
	theirs := filepath.Join(t.TempDir(), "theirs")
	if err := os.WriteFile(theirs, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "sysctl.json")
	if err := os.Symlink(theirs, link); err != nil {
		t.Fatal(err)
	}
	if _, err := statefile.ReadFile(link); !errors.Is(err, safefile.ErrSymlink) {
		t.Errorf("a link: %v, want %v", err, safefile.ErrSymlink)
	}
	open := filepath.Join(dir, "links.json")
	if err := os.WriteFile(open, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o620); err != nil {
		t.Fatal(err)
	}
	if _, err := statefile.ReadFile(open); !errors.Is(err, safefile.ErrRefused) || !strings.Contains(err.Error(), "writable by its group") {
		t.Errorf("group-writable: %v, want %v", err, safefile.ErrRefused)
	}
	if err := os.Chmod(dir, 0o770); err != nil {
		t.Fatal(err)
	}
	if err := statefile.PrepareDir(dir); !errors.Is(err, safefile.ErrRefused) || !strings.Contains(err.Error(), "state directory "+dir) ||
		!strings.Contains(err.Error(), "writable by its group (mode 0770)") {
		t.Errorf("group-writable state directory: %v, want a refusal naming it and why", err)
	}
}

// TestScanFindsDamagedRecordsAndSetAside: Scan finds the damaged records
// of registered kinds (in subdirectories too), SetAside moves one out of
// its way.
func TestScanFindsDamagedRecordsAndSetAside(t *testing.T) {
	statefile.Register("test-*.rec", "what the test keeps")
	statefile.RegisterCache("sub/*/test.rec", "a test cache")
	dir := t.TempDir()
	good, bad, sub := filepath.Join(dir, "test-a.rec"), filepath.Join(dir, "test-b.rec"), filepath.Join(dir, "sub", "x", "test.rec")
	for _, p := range []string{good, bad, sub} {
		if err := statefile.SaveJSON(p, []int{1}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{bad, sub} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	found, err := statefile.Scan(dir)
	if err != nil || len(found) != 2 || found[0].Path != sub || found[1].Path != bad {
		t.Fatalf("Scan: %v, %v; want %s and %s", found, err, sub, bad)
	}
	if statefile.Describe(bad) != "what the test keeps" || statefile.IsCache(bad) || !statefile.IsCache(sub) {
		t.Errorf("kinds: %q cache %v, %s cache %v", statefile.Describe(bad), statefile.IsCache(bad), sub, statefile.IsCache(sub))
	}
	to, err := statefile.SetAside(found[1])
	if err != nil || !strings.HasPrefix(to, bad+".damaged-") {
		t.Fatalf("SetAside: %s, %v", to, err)
	}
	if found, _ := statefile.Scan(dir); len(found) != 1 {
		t.Errorf("after SetAside: %v", found)
	}
}

// A directory of records (a pattern "dir/*") holds, besides its records,
// the ones set aside and a write's temporary file left by a crash: Scan
// lists neither as damaged (a set-aside one would be listed, and set
// aside again, at every recover). Before, both were listed.
func TestScanSkipsSetAsideAndTemporaries(t *testing.T) {
	statefile.Register("recs-test/*", "what the test keeps in a directory")
	dir := t.TempDir()
	bad := filepath.Join(dir, "recs-test", "a")
	if err := statefile.SaveJSON(bad, []int{1}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	found, err := statefile.Scan(dir)
	if err != nil || len(found) != 1 {
		t.Fatalf("Scan: %v, %v; want %s", found, err, bad)
	}
	if _, err := statefile.SetAside(found[0]); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "recs-test", ".tmp-a-123"), []byte("netagent-state 1 99"), 0o600); err != nil {
		t.Fatal(err)
	}
	if found, err := statefile.Scan(dir); err != nil || len(found) != 0 {
		t.Errorf("Scan after SetAside, with a temporary file: %v, %v; want none", found, err)
	}
	if !statefile.IsSetAside(bad+".damaged-20260101T000000.000000000Z") || statefile.IsSetAside(bad) {
		t.Error("IsSetAside does not tell a set-aside record from a record")
	}
}

func TestUpdateJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	type rec struct{ N int }
	for range 2 {
		if err := statefile.UpdateJSON(path, func(r *rec) bool { r.N++; return true }); err != nil {
			t.Fatal(err)
		}
	}
	if err := statefile.UpdateJSON(path, func(r *rec) bool { r.N = 100; return false }); err != nil {
		t.Fatal(err)
	}
	var got rec
	if _, err := statefile.LoadJSON(path, &got); err != nil || got.N != 2 {
		t.Errorf("record %+v, %v; want N 2 (the unchanged update not written)", got, err)
	}
	if err := os.WriteFile(path, []byte("netagent-state 1 3 00\nxyz"), 0o600); err != nil {
		t.Fatal(err)
	}
	called := false
	if err := statefile.UpdateJSON(path, func(r *rec) bool { called = true; return true }); !errors.Is(err, statefile.ErrDamaged) || called {
		t.Errorf("a damaged record: %v, called %v", err, called)
	}
}
