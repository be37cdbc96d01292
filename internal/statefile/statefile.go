// Package statefile holds what the configurators keep in the state
// directory so that it survives a restart: durable and cache writes of
// whole files, records in one envelope (a version and a checksum: a
// damaged record is reported, never taken for an empty one), a
// process-wide lock per file for read-modify-write cycles, and the
// identity of a network namespace instance that keys per-namespace
// records.
//
// The state directory is trusted only under the intent directory's rule
// (PrepareDir: safefile.StrictModes), and every file in it is opened
// relative to its directory's descriptor without following a symbolic
// link, never blocking (safefile.OpenAt), so that whoever could plant a
// name there cannot make root write through it or restore what they
// forged.
package statefile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/safefile"
)

// PrepareDir makes the state directory dir (mode 0700) if it is missing
// and checks it as the intent directory is checked (safefile.StrictModes):
// it and every directory above it owned by root or this process's user and
// writable by no one else (those above may be sticky, like /tmp). An
// error wraps safefile.ErrRefused and names the directory and the reason:
// a state directory others can change is not used at all.
func PrepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating state directory: %w", err)
	}
	return CheckDir(dir)
}

// CheckDir is PrepareDir for a state directory that must exist already (a
// reader's): fs.ErrNotExist when it does not.
func CheckDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("state directory %s: %w", dir, err)
	}
	if err := rule(abs).CheckDir(); err != nil {
		return fmt.Errorf("state directory %s: %w", dir, err)
	}
	return nil
}

// rule is the trust rule of the state directory dir (and its files).
func rule(dir string) safefile.StrictModes {
	return safefile.StrictModes{UID: os.Geteuid(), Dir: dir}
}

// maxFile bounds a state file read (chain records of 100k rules are a few
// MB).
const maxFile = 256 << 20

// openDir opens dir for the *at calls on its entries.
func openDir(dir string) (int, error) {
	return unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// ReadFile reads the state file at path: opened relative to its
// directory without following a link and without blocking, a regular file
// owned by root or this process's user and writable by no one else (a file
// others could have written is refused: safefile.ErrRefused), at most
// maxFile bytes. A missing file is fs.ErrNotExist.
func ReadFile(path string) ([]byte, error) {
	dir, err := openDir(filepath.Dir(path))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(dir)
	data, st, err := safefile.ReadAt(dir, filepath.Base(path), maxFile)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if err := rule(filepath.Dir(path)).CheckStat(path, st); err != nil {
		return nil, err
	}
	return data, nil
}

// OpenFile opens the state file dir/name with flags (O_RDONLY, O_RDWR,
// O_CREAT: a new file gets mode 0600) as ReadFile opens it: a lock file.
// The caller closes the descriptor.
func OpenFile(dir, name string, flags int) (int, error) {
	d, err := openDir(dir)
	if err != nil {
		return -1, fmt.Errorf("opening %s: %w", dir, err)
	}
	defer unix.Close(d)
	path := filepath.Join(dir, name)
	fd, st, err := safefile.OpenAt(d, name, flags)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if err := rule(dir).CheckStat(path, st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// WriteAtomic replaces path with data: written to a temporary file in the
// same directory, synced, renamed over path, and the directory synced, so
// that a crash leaves either the old file or the new one, and once it
// returns the new one survives a crash.
func WriteAtomic(path string, data []byte) error { return write(path, data, true, 0) }

// WriteShared is WriteAtomic for a file other programs read (resolv.conf):
// the new file has mode perm, and path's directory must exist (it is not
// made, with the state directory's mode, as WriteAtomic's is).
func WriteShared(path string, data []byte, perm fs.FileMode) error {
	return write(path, data, true, perm)
}

// WriteCache replaces path with data by a rename, without syncing: for
// caches, where a crash may lose the new file (or leave it empty) but
// never leaves a mix of old and new.
func WriteCache(path string, data []byte) error { return write(path, data, false, 0) }

// write writes a state file (perm 0: the temporary file's mode 0600, its
// directory made if missing) or a shared one (perm: its mode). The
// temporary file is made new (O_EXCL, never through a link) relative to
// the directory's descriptor, and renamed there: a name planted in the
// directory is replaced, never written through.
func write(path string, data []byte, durable bool, perm fs.FileMode) error {
	dirPath, name := filepath.Split(path)
	if perm == 0 {
		if err := os.MkdirAll(dirPath, 0o700); err != nil {
			return err
		}
	}
	dir, err := openDir(filepath.Clean(dirPath))
	if err != nil {
		return &fs.PathError{Op: "open", Path: dirPath, Err: err}
	}
	defer unix.Close(dir)
	tmp := fmt.Sprintf(".tmp-%s-%d", name, rand.Uint64())
	fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &fs.PathError{Op: "create", Path: filepath.Join(dirPath, tmp), Err: err}
	}
	f := os.NewFile(uintptr(fd), tmp)
	renamed := false
	defer func() {
		if !renamed {
			unix.Unlinkat(dir, tmp, 0)
		}
	}()
	if err := fill(f, data, durable, perm); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := unix.Renameat(dir, tmp, dir, name); err != nil {
		return &fs.PathError{Op: "rename", Path: path, Err: err}
	}
	renamed = true
	if !durable {
		return nil
	}
	if err := fsync(dir); err != nil {
		return &fs.PathError{Op: "sync", Path: dirPath, Err: err}
	}
	return nil
}

// fill writes data to the new file f, sets its mode (perm != 0), syncs it
// (durable) and closes it.
func fill(f *os.File, data []byte, durable bool, perm fs.FileMode) error {
	_, err := f.Write(data)
	if err == nil && perm != 0 {
		err = f.Chmod(perm)
	}
	if err == nil && durable {
		err = fsync(int(f.Fd()))
	}
	return errors.Join(err, f.Close())
}

// fsync is unix.Fsync (a test counts the syncs).
var fsync = unix.Fsync

// SyncDir fsyncs a directory, so that the names created, renamed or
// removed in it survive a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// fileLocks serialises read-modify-write cycles on one state file among the
// configurators of all namespaces in this process.
var fileLocks sync.Map // path → *sync.Mutex

// Lock locks path for this process and returns the unlock function.
func Lock(path string) func() {
	m, _ := fileLocks.LoadOrStore(path, new(sync.Mutex))
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// NsIdentity identifies one instance of a network namespace: its name, the
// device and inode of its namespace file, and the boot. A namespace that is
// deleted and made again is a new instance whose objects start from the
// kernel's defaults, so what was recorded for the old one does not apply.
type NsIdentity struct {
	BootID string `json:"boot_id"`
	Netns  string `json:"netns"` // "" is the agent's own namespace
	NsID   string `json:"ns_id"` // "NS(<dev>:<inode>)"
}

// Identify returns t's identity.
func Identify(t *netnsx.Target) (NsIdentity, error) {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return NsIdentity{}, fmt.Errorf("reading boot id: %w", err)
	}
	return NsIdentity{BootID: strings.TrimSpace(string(boot)), Netns: t.Name, NsID: t.NsHandle().UniqueId()}, nil
}
