package host

import (
	"os"
	"path/filepath"

	"github.com/netagent/netagent/internal/statefile"
)

// openJournal opens the trial journal at path as a state file
// (statefile.OpenFile: relative to its directory, no link followed, never
// blocking, a regular file owned by root or this process's user and
// writable by no one else): a journal planted as a link is never
// truncated or read through, a FIFO never blocks recover.
func openJournal(path string, flags int) (*os.File, error) {
	fd, err := statefile.OpenFile(filepath.Dir(path), filepath.Base(path), flags)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}
