package firewall

import (
	"os"
	"path/filepath"
	"sync"
)

// writeFileAtomic replaces path with data: written to a temporary file in
// the same directory, synced, renamed over path, and the directory synced,
// so that a crash leaves either the old file or the new one.
func writeFileAtomic(path string, data []byte) error { return writeFile(path, data, true) }

// writeCacheFile replaces path with data by a rename, without syncing: for
// caches, where a crash may lose the new file (or leave it empty) but
// never leaves a mix of old and new.
func writeCacheFile(path string, data []byte) error { return writeFile(path, data, false) }

func writeFile(path string, data []byte, durable bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
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
	return syncDir(dir)
}

func syncDir(dir string) error {
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

// lockFile locks path and returns the unlock function.
func lockFile(path string) func() {
	m, _ := fileLocks.LoadOrStore(path, new(sync.Mutex))
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}
