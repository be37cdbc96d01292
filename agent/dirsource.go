package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/sirupsen/logrus"
)

// DirSource is a directory of intent files: every regular file whose name
// ends in ".json" and does not start with "." (editors' temporary and swap
// files do) is a document named by its file name.
//
// It watches the directory, not the files, so that editors and tools that
// write a temporary file and rename it over the old one are seen, and it
// reports any event in the directory as a change: the loop debounces the
// burst and reads the whole directory again, comparing contents.
type DirSource struct {
	dir string
	log logrus.FieldLogger
	// retry is how long Watch waits before watching again after the
	// watch failed (the directory was removed, say).
	retry time.Duration
}

// NewDirSource returns the source for dir.
func NewDirSource(dir string, log logrus.FieldLogger) *DirSource {
	return &DirSource{dir: dir, log: log.WithField("source", "dir:"+dir), retry: 5 * time.Second}
}

// Name returns "dir:<dir>".
func (s *DirSource) Name() string { return "dir:" + s.dir }

// IsIntentFile reports whether a file name is read as an intent document.
func IsIntentFile(name string) bool {
	return strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, ".")
}

// Load reads every intent file of the directory.
func (s *DirSource) Load() (map[string][]byte, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("reading intent directory: %w", err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if !IsIntentFile(e.Name()) {
			continue
		}
		path := filepath.Join(s.dir, e.Name())
		fi, err := os.Stat(path) // follows symlinks
		if err != nil || !fi.Mode().IsRegular() {
			continue // a dangling link, a directory: not a document
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading intent file: %w", err)
		}
		out[e.Name()] = raw
	}
	return out, nil
}

// Watch reports changes of the directory until ctx ends.
func (s *DirSource) Watch(ctx context.Context, changed chan<- string) {
	for ctx.Err() == nil {
		if err := s.watch(ctx, changed); err != nil {
			s.log.WithError(err).Error("watching the intent directory; trying again")
		}
		select {
		case <-ctx.Done():
		case <-time.After(s.retry):
		}
	}
}

// watch is one fsnotify watch of the directory. It reports a change when
// it starts (anything may have happened while nobody watched) and after
// every event; a pending change is sent whenever the loop takes it.
func (s *DirSource) watch(ctx context.Context, changed chan<- string) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	if err := w.Add(s.dir); err != nil {
		return err
	}
	pending := true
	for {
		var out chan<- string
		if pending {
			out = changed
		}
		select {
		case <-ctx.Done():
			return nil
		case out <- s.Name():
			pending = false
		case ev, ok := <-w.Events:
			if !ok {
				return fmt.Errorf("watch of %s closed", s.dir)
			}
			pending = true
			if ev.Name == s.dir && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				return fmt.Errorf("intent directory %s was removed", s.dir)
			}
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
