package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/sirupsen/logrus"
)

// DirSource is a directory of intent files: every regular file whose name
// ends in ".json" and does not start with "." (editors' temporary and swap
// files do) is a document named by its file name.
//
// A file is read only if no one but root (or the agent's own user) can
// change it: the file, the intent directory, and every directory and
// symbolic link on the way to it (see strictModes). Any other file is
// refused: Load reports it in a *RefusedError, so that the loop keeps the
// file's last good version and shows why in status. A symbolic link is
// followed under the same rules, wherever it points.
//
// It watches the directory, not the files, so that editors and tools that
// write a temporary file and rename it over the old one are seen, and it
// reports events naming an intent file (or a path one depends on) as a
// change: the loop reads the whole directory again, comparing contents.
// The target of a symbolic link elsewhere is watched too (its directory,
// for events naming the target or a link on the way to it).
//
// A file renamed into place is complete: that is how editors and config
// tools write atomically. The agent's loop watches through WatchSettled,
// which reports such a change apart, so that the loop handles it after a
// short settle window (Config.IntentSettle) instead of the quiet period
// (Config.IntentDebounce) that any other change needs: a file written in
// place may be half written, a file removed or renamed away may be an
// editor's rename dance before it writes the new version. Events naming
// other files (a tool's temporary file) are not changes, unless a
// document's link leads to them.
type DirSource struct {
	dir string
	abs string // dir as an absolute path
	log logrus.FieldLogger
	// retry is how long Watch waits before watching again after the
	// watch failed (the directory was removed, say).
	retry time.Duration
	// uid is the agent's own user, trusted besides root.
	uid int

	mu       sync.Mutex
	deps     map[string]bool // paths outside dir whose change changes a document
	local    map[string]bool // paths inside dir, not intent files, that a document's link leads to
	retarget chan struct{}   // deps changed (capacity 1)
}

// NewDirSource returns the source for dir.
func NewDirSource(dir string, log logrus.FieldLogger) *DirSource {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	return &DirSource{dir: dir, abs: abs, log: log.WithField("source", "dir:"+dir), retry: 5 * time.Second,
		uid: os.Geteuid(), deps: map[string]bool{}, local: map[string]bool{}, retarget: make(chan struct{}, 1)}
}

// Name returns "dir:<dir>".
func (s *DirSource) Name() string { return "dir:" + s.dir }

// IsIntentFile reports whether a file name is read as an intent document.
func IsIntentFile(name string) bool {
	return strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, ".")
}

// Load reads every intent file of the directory. Files that fail the
// ownership and mode checks are left out and named in a *RefusedError
// returned with the others.
func (s *DirSource) Load() (map[string][]byte, error) {
	dir := s.abs
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading intent directory: %w", err)
	}
	modes := strictModes{uid: s.uid, dir: dir}
	dirErr := modes.checkDir()
	if dirErr != nil && !errors.Is(dirErr, errRefused) {
		return nil, fmt.Errorf("checking intent directory: %w", dirErr)
	}
	out := map[string][]byte{}
	refused := &RefusedError{Docs: map[string]error{}}
	deps := map[string]bool{}
	for _, e := range entries {
		if !IsIntentFile(e.Name()) {
			continue
		}
		if dirErr != nil {
			refused.Docs[e.Name()] = fmt.Errorf("the intent directory: %w", dirErr)
			continue
		}
		raw, err := s.read(modes, filepath.Join(dir, e.Name()), deps)
		switch {
		case errors.Is(err, errRefused), errors.Is(err, errTooLarge):
			refused.Docs[e.Name()] = err
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, errNotRegular):
			// a dangling link, a directory: not a document
		case err != nil:
			return nil, fmt.Errorf("reading intent file: %w", err)
		default:
			out[e.Name()] = raw
		}
	}
	s.setDeps(dir, deps)
	if len(refused.Docs) > 0 {
		return out, refused
	}
	return out, nil
}

// read checks and reads one intent file, adding to deps the paths whose
// change changes it (the links followed and the real file), even when it
// is refused: fixing a target's mode must be seen too.
func (s *DirSource) read(modes strictModes, path string, deps map[string]bool) ([]byte, error) {
	r, err := modes.check(path)
	for _, p := range r.deps {
		deps[p] = true
	}
	if err != nil {
		return nil, err
	}
	return modes.readChecked(r.real)
}

// setDeps records the paths outside dir to watch, and tells the watch if
// they changed.
func (s *DirSource) setDeps(dir string, deps map[string]bool) {
	local := map[string]bool{}
	for p := range deps {
		if filepath.Dir(p) == dir {
			delete(deps, p) // the directory's own watch sees it
			local[p] = true
		}
	}
	s.mu.Lock()
	same := maps.Equal(s.deps, deps)
	s.deps = deps
	s.local = local
	s.mu.Unlock()
	if !same {
		select {
		case s.retarget <- struct{}{}:
		default:
		}
	}
}

// depDirs returns the paths to watch outside the directory, and their
// directories.
func (s *DirSource) depDirs() (deps, dirs map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	deps, dirs = maps.Clone(s.deps), map[string]bool{}
	for p := range s.local {
		deps[p] = true
	}
	for p := range deps {
		dirs[filepath.Dir(p)] = true
	}
	return deps, dirs
}

// Watch reports changes of the directory until ctx ends.
func (s *DirSource) Watch(ctx context.Context, changed chan<- string) {
	s.WatchSettled(ctx, changed, changed)
}

// WatchSettled is Watch, but reports a change made only of files renamed
// into place on settled (see SettledWatcher).
func (s *DirSource) WatchSettled(ctx context.Context, changed, settled chan<- string) {
	for ctx.Err() == nil {
		if err := s.watch(ctx, changed, settled); err != nil {
			s.log.WithError(err).Error("watching the intent directory; trying again")
		}
		select {
		case <-ctx.Done():
		case <-time.After(s.retry):
		}
	}
}

// watch is one fsnotify watch of the directory (and of the directories of
// the targets of its links). It reports a change when it starts (anything
// may have happened while nobody watched) and after every event that
// matters, on settled if the event is a file renamed into place, else on
// changed; a pending change is sent whenever the loop takes it.
func (s *DirSource) watch(ctx context.Context, changed, settled chan<- string) error {
	w, err := s.newWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	deps, watched := s.watchDeps(w, nil)
	pending, pendingSettled := true, false
	var prev fsnotify.Event // the event before this one
	for {
		select {
		case <-ctx.Done():
			return nil
		case when(pending, changed) <- s.Name():
			pending = false
		case when(pendingSettled, settled) <- s.Name():
			pendingSettled = false
		case <-s.retarget:
			deps, watched = s.watchDeps(w, watched)
		case ev, ok := <-w.Events:
			change, complete, err := s.event(prev, ev, ok, deps)
			if err != nil {
				return err
			}
			pending, pendingSettled = pending || change, pendingSettled || complete
			prev = ev
		case err, ok := <-w.Errors:
			if !ok {
				return fmt.Errorf("watch of %s closed", s.dir)
			}
			// An overflow lost events: reading everything again is the fix.
			s.log.WithError(err).Warn("intent directory watch error; reading it again")
			pending = true
		}
	}
}

// when is ch if on, else nil: a select case that is off.
func when(on bool, ch chan<- string) chan<- string {
	if on {
		return ch
	}
	return nil
}

// newWatcher starts an fsnotify watch of the directory.
func (s *DirSource) newWatcher() (*fsnotify.Watcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := w.Add(s.abs); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// event judges ev (prev the event before it; ok false: the watch ended):
// a change (complete, if a file renamed into place), or none; an error if
// the watch ended or the directory was removed.
func (s *DirSource) event(prev, ev fsnotify.Event, ok bool, deps map[string]bool) (change, complete bool, err error) {
	dir := s.abs
	if !ok {
		return false, false, fmt.Errorf("watch of %s closed", s.dir)
	}
	if ev.Name == dir && ev.Has(fsnotify.Remove|fsnotify.Rename) {
		return false, false, fmt.Errorf("intent directory %s was removed", s.dir)
	}
	if !s.matters(ev, dir, deps) {
		return false, false, nil
	}
	if movedIn(prev, ev) {
		return false, true, nil
	}
	return true, false, nil
}

// matters reports whether an event may change a document: it names the
// directory, an intent file in it, or a path a document's link leads to.
func (s *DirSource) matters(ev fsnotify.Event, dir string, deps map[string]bool) bool {
	return ev.Name == dir || deps[ev.Name] ||
		filepath.Dir(ev.Name) == dir && IsIntentFile(filepath.Base(ev.Name))
}

// movedIn reports whether ev is a file renamed into place: inotify reports
// a rename within the watched directories as a Rename of the old name
// directly followed by a Create of the new one. A file moved in from an
// unwatched directory is a lone Create, like a new file about to be
// written: not known complete.
func movedIn(prev, ev fsnotify.Event) bool {
	return ev.Op == fsnotify.Create && prev.Op == fsnotify.Rename
}

// watchDeps watches the directories of the paths outside the intent
// directory that its documents depend on, and stops watching those no
// longer needed. A directory that cannot be watched (it is gone) is
// skipped: the next Load finds the document gone and says so.
func (s *DirSource) watchDeps(w *fsnotify.Watcher, watched map[string]bool) (deps, now map[string]bool) {
	deps, dirs := s.depDirs()
	now = map[string]bool{}
	for d := range dirs {
		if watched[d] {
			now[d] = true
			continue
		}
		if err := w.Add(d); err != nil {
			s.log.WithError(err).WithField("dir", d).Warn("cannot watch the directory of a linked intent file")
			continue
		}
		now[d] = true
	}
	for d := range watched {
		if !now[d] && d != s.abs {
			w.Remove(d)
		}
	}
	return deps, now
}

// CheckDir checks the intent directory dir before a DirSource is made of
// it: it must be a directory. With optional (a fleet member's default
// directory) a dir that does not exist is no error: CheckDir returns ""
// (no intent directory). dir "" stays "".
func CheckDir(dir string, optional bool) (string, error) {
	if dir == "" {
		return "", nil
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if optional && errors.Is(err, os.ErrNotExist) {
			return "", nil
		}
		return "", fmt.Errorf("intent directory %s: not a directory (%v)", dir, err)
	}
	return dir, nil
}
