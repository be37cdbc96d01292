package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

func TestDirSourceLoadsOnlyIntentFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a.json", "A")
	write(".a.json.swp", "swap")
	write("notes.txt", "txt")
	write("b.json~", "backup")
	os.Mkdir(filepath.Join(dir, "d.json"), 0o700)
	os.Symlink("a.json", filepath.Join(dir, "link.json"))
	os.Symlink("missing", filepath.Join(dir, "dangling.json"))
	got, err := NewDirSource(dir, logrus.New()).Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got["a.json"]) != "A" || string(got["link.json"]) != "A" {
		t.Errorf("Load: %q", got)
	}
}

func TestDirSourceLoadFailsForAMissingDirectory(t *testing.T) {
	if _, err := NewDirSource(filepath.Join(t.TempDir(), "nope"), logrus.New()).Load(); err == nil {
		t.Error("no error for a missing directory")
	}
}

// TestDirSourceSeesRenames: a tool that writes a temporary file and
// renames it over the intent file (as editors and config management do)
// must be seen, although the watched file's inode is replaced.
func TestDirSourceSeesRenames(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	os.WriteFile(path, []byte("one"), 0o600)
	src := NewDirSource(dir, logrus.New())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changed := make(chan string)
	go src.Watch(ctx, changed)
	waitChange := func(what string) {
		t.Helper()
		select {
		case name := <-changed:
			if name != src.Name() {
				t.Fatalf("change from %q", name)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no change reported for %s", what)
		}
	}
	waitChange("the start of the watch")
	for i, text := range []string{"two", "three"} {
		tmp := filepath.Join(dir, ".a.json.tmp")
		os.WriteFile(tmp, []byte(text), 0o600)
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		waitChange("rename " + text)
		drainChange(changed)
		got, _ := src.Load()
		if string(got["a.json"]) != text {
			t.Errorf("after rename %d: %q", i, got["a.json"])
		}
	}
	os.Remove(path)
	waitChange("a removal")
}

// drainChange takes the change that may still be pending from the same burst.
func drainChange(changed chan string) {
	select {
	case <-changed:
	case <-time.After(100 * time.Millisecond):
	}
}
