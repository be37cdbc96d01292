package safefile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/safefile"
)

// TestReadNamedRefusesWhatIsNoRegularFile: a FIFO (whose open would block
// until a writer comes), a symbolic link, a directory and a file over the
// bound are refused at once; a regular file is read with its status.
func TestReadNamedRefusesWhatIsNoRegularFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if err := os.WriteFile(good, []byte("content"), 0o640); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path string
		max  int64
		want error
		text string
	}{
		{fifo, 100, safefile.ErrNotRegular, "FIFO"},
		{link, 100, safefile.ErrSymlink, "symbolic link"},
		{dir, 100, safefile.ErrNotRegular, "directory"},
		{good, 3, safefile.ErrTooLarge, "larger"},
		{filepath.Join(dir, "missing"), 100, os.ErrNotExist, "no such file"},
	}
	for _, c := range cases {
		done := make(chan error, 1)
		go func() { _, _, err := safefile.ReadNamed(c.path, c.max); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
				t.Errorf("%s: %v, want %v (%q)", c.path, err, c.want, c.text)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: ReadNamed did not return in 5 s", c.path)
		}
	}
	data, st, err := safefile.ReadNamed(good, 100)
	if err != nil || string(data) != "content" || st.Mode&0o777 != 0o640 {
		t.Errorf("regular file: %q, mode %o, %v", data, st.Mode&0o777, err)
	}
}

// TestOpenAtCreatesWithoutFollowing: a create through OpenAt never writes
// through a planted symbolic link; it makes a 0600 file where none is.
func TestOpenAtCreatesWithoutFollowing(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("root's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "lock")); err != nil {
		t.Fatal(err)
	}
	d, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(d)
	if fd, _, err := safefile.OpenAt(d, "lock", unix.O_RDWR|unix.O_CREAT); !errors.Is(err, safefile.ErrSymlink) {
		unix.Close(fd)
		t.Errorf("open of a planted link: %v, want %v", err, safefile.ErrSymlink)
	}
	fd, st, err := safefile.OpenAt(d, "new", unix.O_RDWR|unix.O_CREAT)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	if st.Mode&0o777 != 0o600 {
		t.Errorf("made with mode %o, want 0600", st.Mode&0o777)
	}
}
