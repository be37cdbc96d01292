package safefile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ErrSymlink: a symbolic link where a file is named. A link is not
// followed: the file it points at may be anyone's, and may change between
// the look and the open.
var ErrSymlink = errors.New("is a symbolic link (name the file itself)")

// ErrTooLarge: a file larger than its reader's bound.
var ErrTooLarge = errors.New("larger than allowed")

// ReadNamed reads the regular file at path, as a file an intent names is
// read: at most max bytes, and never blocking. A symbolic link at the last
// component is refused (ErrSymlink), a FIFO, socket, device or directory
// too (ErrNotRegular), before it is opened; the open itself neither follows
// a link nor blocks (O_NOFOLLOW|O_NONBLOCK), and the descriptor opened must
// be the regular file looked at (the same device and inode), so that a
// file swapped in between is refused too. The file's status is returned
// for its caller's checks (mode, owner). Errors do not name path: the
// caller does.
func ReadNamed(path string, max int64) ([]byte, *unix.Stat_t, error) {
	dir, err := unix.Open(filepath.Dir(path), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	defer unix.Close(dir)
	return ReadAt(dir, filepath.Base(path), max)
}

// ReadAt is ReadNamed for the entry name of the directory open at dir.
func ReadAt(dir int, name string, max int64) ([]byte, *unix.Stat_t, error) {
	fd, st, err := OpenAt(dir, name, unix.O_RDONLY)
	if err != nil {
		return nil, nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) > max {
		return nil, nil, fmt.Errorf("%w (%d bytes)", ErrTooLarge, max)
	}
	return data, st, nil
}

// ErrReplaced: the file was replaced between the look and the open, again
// and again.
var ErrReplaced = errors.New("replaced while it was opened")

// replacedAttempts bounds the opens of a file replaced between the look
// and the open: a writer that replaces it by a rename (statefile's atomic
// writes, the store's compaction) makes a reader look again, not fail.
const replacedAttempts = 4

// OpenAt opens the regular file name in the directory open at dir, with
// flags (O_RDONLY, O_RDWR|O_CREAT, ...) and O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC,
// checking first (without following a link) and after the open (the
// descriptor) that it is the regular file looked at; a file replaced in
// between is looked at and opened again, up to replacedAttempts times
// (then ErrReplaced). A file made by the open (O_CREAT) gets mode 0600.
func OpenAt(dir int, name string, flags int) (int, *unix.Stat_t, error) {
	for range replacedAttempts - 1 {
		fd, st, err := openAt(dir, name, flags)
		if !errors.Is(err, ErrReplaced) {
			return fd, st, err
		}
	}
	return openAt(dir, name, flags)
}

// afterLook, when set (tests), runs between the look and the open.
var afterLook func()

func openAt(dir int, name string, flags int) (int, *unix.Stat_t, error) {
	var before unix.Stat_t
	err := unix.Fstatat(dir, name, &before, unix.AT_SYMLINK_NOFOLLOW)
	if afterLook != nil {
		afterLook()
	}
	exists := err == nil
	switch {
	case err != nil && !(errors.Is(err, unix.ENOENT) && flags&unix.O_CREAT != 0):
		return -1, nil, err
	case exists:
		if err := regular(&before); err != nil {
			return -1, nil, err
		}
	}
	fd, err := unix.Openat(dir, name, flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, unix.ELOOP) {
		err = ErrSymlink // made a link between the look and the open
	}
	if err != nil {
		return -1, nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, nil, err
	}
	err = regular(&st)
	if err == nil && exists && (st.Dev != before.Dev || st.Ino != before.Ino) {
		err = ErrReplaced
	}
	if err != nil {
		unix.Close(fd)
		return -1, nil, err
	}
	return fd, &st, nil
}

// regular refuses what is not a regular file, naming what it is.
func regular(st *unix.Stat_t) error {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return nil
	case unix.S_IFLNK:
		return ErrSymlink
	case unix.S_IFIFO:
		return fmt.Errorf("%w (a FIFO)", ErrNotRegular)
	case unix.S_IFSOCK:
		return fmt.Errorf("%w (a socket)", ErrNotRegular)
	case unix.S_IFCHR, unix.S_IFBLK:
		return fmt.Errorf("%w (a device)", ErrNotRegular)
	case unix.S_IFDIR:
		return fmt.Errorf("%w (a directory)", ErrNotRegular)
	}
	return ErrNotRegular
}
