package statefile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/internal/testns"
)

// writers are the two ways of replacing a state file.
var writers = map[string]func(string, []byte) error{
	"WriteAtomic": statefile.WriteAtomic,
	"WriteCache":  statefile.WriteCache,
}

func TestWriteReplacesWholeFileAndLeavesNoTemporary(t *testing.T) {
	for name, write := range writers {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state", "ns")
			path := filepath.Join(dir, "links.json")
			if err := write(path, []byte("first, and longer than the second")); err != nil {
				t.Fatalf("first write: %v", err)
			}
			if err := write(path, []byte("second")); err != nil {
				t.Fatalf("second write: %v", err)
			}
			if got, _ := os.ReadFile(path); string(got) != "second" {
				t.Errorf("file holds %q, want %q", got, "second")
			}
			assertOnly(t, dir, "links.json")
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			if perm := fi.Mode().Perm(); perm != 0o700 {
				t.Errorf("created directory has mode %v, want 0700 (state is not for others to read)", perm)
			}
		})
	}
}

// A write that cannot replace the file (here: a directory stands at the
// path) fails, keeps what was there, and leaves no temporary file behind.
func TestWriteFailureKeepsTheOldAndNoTemporary(t *testing.T) {
	for name, write := range writers {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "made.json")
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(path, "keep"), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := write(path, []byte("new")); err == nil {
				t.Fatal("write over a non-empty directory succeeded, want an error")
			}
			assertOnly(t, dir, "made.json")
			if _, err := os.Stat(filepath.Join(path, "keep")); err != nil {
				t.Errorf("what stood at the path was lost: %v", err)
			}
		})
	}
}

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("%s holds %q, want only %q", dir, got, names)
	}
}

// Lock serialises one path and leaves other paths free.
func TestLockSerialisesOnePath(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	unlockA := statefile.Lock(a)
	statefile.Lock(b)() // another path is not held by a's lock
	acquired := make(chan struct{})
	go func() {
		unlock := statefile.Lock(a)
		close(acquired)
		unlock()
	}()
	select {
	case <-acquired:
		t.Fatal("a second Lock of the same path was granted while the first was held")
	default:
	}
	unlockA()
	<-acquired
}

func TestIdentifyTellsNamespaceInstancesApart(t *testing.T) {
	own, err := netnsx.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	id1, err := statefile.Identify(own)
	if err != nil {
		t.Fatal(err)
	}
	id2, err := statefile.Identify(own)
	if err != nil {
		t.Fatal(err)
	}
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if id1 != id2 || id1.BootID != strings.TrimSpace(string(boot)) || id1.Netns != "" ||
		!strings.HasPrefix(id1.NsID, "NS(") {
		t.Errorf("own namespace: %+v then %+v; want equal, boot id %q, netns \"\", NsID NS(dev:inode)", id1, id2, boot)
	}
	other := testns.New(t)
	id3, err := statefile.Identify(other)
	if err != nil {
		t.Fatal(err)
	}
	if id3.Netns != other.Name || id3.NsID == id1.NsID || id3.BootID != id1.BootID {
		t.Errorf("namespace %s: %+v; want its name, another NsID than %s, the same boot", other.Name, id3, id1.NsID)
	}
}
