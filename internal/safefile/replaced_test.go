package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenAtFileReplaced: a file a writer replaces by a rename between the
// look and the open is looked at and opened again (the new one, checked
// as the first was); one replaced at every try is refused with
// ErrReplaced, never opened unchecked.
func TestOpenAtFileReplaced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log")
	write := func(s string) {
		tmp := filepath.Join(dir, ".tmp")
		if err := os.WriteFile(tmp, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write("first")
	d, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(d)
	t.Cleanup(func() { afterLook = nil })

	looks := 0
	afterLook = func() {
		if looks++; looks == 1 {
			write("compacted") // as the store's compaction does
		}
	}
	fd, _, err := OpenAt(d, "log", unix.O_RDONLY)
	if err != nil {
		t.Fatalf("a file replaced once: %v", err)
	}
	buf := make([]byte, 32)
	n, _ := unix.Read(fd, buf)
	unix.Close(fd)
	if string(buf[:n]) != "compacted" || looks != 2 {
		t.Errorf("read %q after %d looks, want the new file after 2", buf[:n], looks)
	}

	looks = 0
	afterLook = func() { looks++; write("again") }
	if fd, _, err := OpenAt(d, "log", unix.O_RDONLY); !errors.Is(err, ErrReplaced) {
		unix.Close(fd)
		t.Errorf("a file replaced at every look: %v, want %v", err, ErrReplaced)
	}
	if looks != replacedAttempts {
		t.Errorf("%d looks, want %d", looks, replacedAttempts)
	}
}
