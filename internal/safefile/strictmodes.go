package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxLinks bounds the symbolic links followed to reach one file (as the
// kernel's ELOOP does).
const maxLinks = 40

// StrictModes decides whether a file in a directory may be trusted, as
// sshd's StrictModes does for authorized_keys: anyone who can change an
// intent file controls the host's routes, firewall and sysctls, and anyone
// who can change the state directory can plant a record root restores or
// a link root writes through, so the file and every directory on the way
// to it must be in the hands of root (or of the agent's own user). It is
// the rule of the intent directory (source.DirSource) and of the state
// directory (statefile.PrepareDir).
//
//   - The directory, the directory that holds the file, and the directory
//     that holds each symbolic link followed: owned by root or the agent's
//     user, and writable by nobody else (mode &^ 0755 clear).
//   - Every other directory traversed (the ancestors up to /, and those
//     reached through links): owned by root or the agent's user, and
//     writable by nobody else unless it is sticky (like /tmp: others can
//     add names there, but not replace what root owns).
//   - Every symbolic link followed: owned by root or the agent's user. A
//     link is followed only under these rules, wherever it points.
//   - The file: a regular file owned by root or the agent's user, writable
//     by nobody else.
//
// The rule has sshd's limit: it judges the file's owner and mode when it
// looks, not who holds it open. A descriptor opened for writing before
// root made the file its own (chown, chmod) and moved it into place still
// writes to it: a file is to be copied into the directory (a new inode
// root's tools make), never moved there from where others could write it.
type StrictModes struct {
	UID int    // the agent's own uid (besides root)
	Dir string // the directory, as an absolute path
}

// Resolved is a file that passed the checks: its real path, and the
// paths whose change changes it (the links followed, the real file).
type Resolved struct {
	Real string
	Deps []string
}

// ErrRefused marks a file or directory that exists but must not be
// trusted.
var ErrRefused = errors.New("refused: a file, and every directory and link on the way to it, " +
	"must be owned by root (or the agent's user) and writable by no one else")

// CheckDir checks the directory itself: its ancestors and itself.
func (m StrictModes) CheckDir() error {
	w := &walker{m: m}
	real, err := w.resolve(m.Dir, true)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(real)
	if err != nil {
		return err
	}
	return m.strictDir(real, fi)
}

// Check resolves path (an entry of the directory) and checks it and
// everything on the way to it. An error wraps ErrRefused when the file is
// not to be trusted, fs.ErrNotExist when it (or a link's target) is
// missing, ErrNotRegular when it is no regular file.
//
// The paths to watch (Deps) are returned also with an error, as far as the
// resolution got: a refused target must be seen when it is made safe.
func (m StrictModes) Check(path string) (Resolved, error) {
	w := &walker{m: m}
	real, err := w.resolve(path, false)
	if err != nil {
		return Resolved{Deps: w.links}, err
	}
	r := Resolved{Deps: append(w.links, real)}
	fi, err := os.Lstat(real)
	if err != nil {
		return r, err
	}
	if !fi.Mode().IsRegular() {
		return r, fmt.Errorf("%s is not a regular file: %w", real, ErrNotRegular)
	}
	if err := m.ownedAndPrivate(real, fi, false); err != nil {
		return r, err
	}
	r.Real = real
	return r, nil
}

// ErrNotRegular: a directory, a FIFO or a device where a file is named.
var ErrNotRegular = errors.New("not a regular file")

// walker resolves one path component by component, as the kernel does,
// checking what it traverses.
type walker struct {
	m     StrictModes
	links []string // the symbolic links followed, in order
}

// resolve returns the real path of path. dirOnly: path names a directory
// (the intent directory); its last component is checked as a directory.
func (w *walker) resolve(path string, dirOnly bool) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%s is not an absolute path", path)
	}
	cur := "/"
	fi, err := os.Lstat(cur)
	if err != nil {
		return "", err
	}
	if err := w.m.lenientDir(cur, fi); err != nil {
		return "", err
	}
	comps := strings.Split(strings.TrimPrefix(filepath.Clean(path), "/"), "/")
	for i, comp := range comps {
		if comp == "" {
			continue
		}
		last := i == len(comps)-1
		next := filepath.Join(cur, comp)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 || (last && !dirOnly) {
			// cur holds a link or the file: nobody else may change its entries.
			dfi, err := os.Lstat(cur)
			if err != nil {
				return "", err
			}
			if err := w.m.strictDir(cur, dfi); err != nil {
				return "", err
			}
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if next, fi, err = w.follow(cur, next, fi); err != nil {
				return "", err
			}
		}
		cur = next
		if !last || dirOnly {
			if !fi.IsDir() {
				return "", fmt.Errorf("%s: %w", cur, syscall.ENOTDIR)
			}
			if err := w.m.lenientDir(cur, fi); err != nil {
				return "", err
			}
		}
	}
	return cur, nil
}

// follow follows the symbolic link at link (in the directory cur) and
// returns the real path of its target.
func (w *walker) follow(cur, link string, fi fs.FileInfo) (string, fs.FileInfo, error) {
	if err := w.m.owner(link, fi); err != nil {
		return "", nil, err
	}
	w.links = append(w.links, link)
	if len(w.links) > maxLinks {
		return "", nil, fmt.Errorf("%s: more than %d symbolic links: %w", link, maxLinks, syscall.ELOOP)
	}
	target, err := os.Readlink(link)
	if err != nil {
		return "", nil, err
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(cur, target)
	}
	real, err := w.resolve(target, false)
	if err != nil {
		return "", nil, err
	}
	rfi, err := os.Lstat(real)
	return real, rfi, err
}

// owner checks that path belongs to root or the agent's user.
func (m StrictModes) owner(path string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: no owner information", path)
	}
	return m.ownedBy(path, st.Uid)
}

func (m StrictModes) ownedBy(path string, uid uint32) error {
	if uid != 0 && int(uid) != m.UID {
		return fmt.Errorf("%s is owned by uid %d, not by root%s: %w", path, uid, m.orSelf(), ErrRefused)
	}
	return nil
}

func (m StrictModes) orSelf() string {
	if m.UID == 0 {
		return ""
	}
	return fmt.Sprintf(" or uid %d", m.UID)
}

// ownedAndPrivate checks owner and mode: writable by the owner only
// (sticky: a sticky directory may be writable by others, if allowed).
func (m StrictModes) ownedAndPrivate(path string, fi fs.FileInfo, stickyOK bool) error {
	if err := m.owner(path, fi); err != nil {
		return err
	}
	return private(path, fi.Mode().Perm(), stickyOK && fi.Mode()&fs.ModeSticky != 0)
}

// CheckStat checks the status of an opened file (safefile.OpenAt): owned
// by root or the agent's user, writable by no one else.
func (m StrictModes) CheckStat(path string, st *unix.Stat_t) error {
	if err := m.ownedBy(path, st.Uid); err != nil {
		return err
	}
	return private(path, fs.FileMode(st.Mode&0o777), false)
}

// private checks that only the owner may write (or that the sticky bit
// makes others' writes harmless: sticky).
func private(path string, perm fs.FileMode, sticky bool) error {
	if perm&0o022 == 0 || sticky {
		return nil
	}
	who := "group and others"
	switch {
	case perm&0o020 == 0:
		who = "others"
	case perm&0o002 == 0:
		who = "its group"
	}
	return fmt.Errorf("%s is writable by %s (mode %04o): %w", path, who, perm, ErrRefused)
}

// strictDir checks a directory whose entries must not change behind root.
func (m StrictModes) strictDir(path string, fi fs.FileInfo) error {
	return m.ownedAndPrivate(path, fi, false)
}

// lenientDir checks a directory traversed: others may add names to it if
// it is sticky.
func (m StrictModes) lenientDir(path string, fi fs.FileInfo) error {
	return m.ownedAndPrivate(path, fi, true)
}

// ReadChecked reads the file at real (a path check returned), refusing it
// if it was replaced in between by a link or a file that fails the checks,
// and reading at most max bytes: a larger file is ErrTooLarge naming it.
func (m StrictModes) ReadChecked(real string, max int64) ([]byte, error) {
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: %w", real, ErrNotRegular)
	}
	if err := m.ownedAndPrivate(real, fi, false); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("%s: %w (%d MiB)", real, ErrTooLarge, max>>20)
	}
	return data, err
}
