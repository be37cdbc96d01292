// Package statefile holds what the configurators keep in the state
// directory so that it survives a restart: durable and cache writes of
// whole files, a process-wide lock per file for read-modify-write cycles,
// and the identity of a network namespace instance that keys per-namespace
// records.
package statefile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/netagent/netagent/configurators/netnsx"
)

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
// directory made if missing) or a shared one (perm: its mode).
func write(path string, data []byte, durable bool, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	if perm == 0 {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if perm != 0 {
		if err := f.Chmod(perm); err != nil {
			f.Close()
			return err
		}
	}
	if durable {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil || !durable {
		return err
	}
	return SyncDir(dir)
}

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

// SaveJSON writes v as JSON to path, as WriteAtomic does.
func SaveJSON(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return WriteAtomic(path, data)
}

// LoadJSON reads the JSON file at path into v, and reports false when
// there is no such file.
func LoadJSON(path string, v any) (bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return true, nil
}
