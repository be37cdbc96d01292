package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/netagent/netagent/store"
)

// Watch follows the keys under prefix (see store.Store).
func (s *Store) Watch(ctx context.Context, prefix string, from store.Version) (*store.Watch, error) {
	dir, err := store.ValidatePrefix(prefix)
	if err != nil {
		return nil, err
	}
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if err := s.startNotify(); err != nil {
		return nil, err
	}
	return store.NewWatch(ctx, func(ctx context.Context, emit store.Emit) error {
		return s.follow(ctx, dir, from, emit)
	}), nil
}

// follow is a watch's producer.
func (s *Store) follow(ctx context.Context, dir string, from store.Version, emit store.Emit) error {
	pos := from
	if from == store.NoVersion {
		entries, rev, err := s.List(ctx, dir)
		if err != nil {
			return fmt.Errorf("%w: %w", store.ErrWatchClosed, err)
		}
		if err := store.EmitListing(ctx, emit, entries, rev); err != nil {
			return err
		}
		pos = rev
	}
	poll := time.NewTicker(s.opts.PollInterval)
	defer poll.Stop()
	for {
		s.mu.Lock()
		wake := s.changed // taken before reading: a change after the read wakes us
		s.mu.Unlock()
		next, err := s.deliver(ctx, dir, pos, emit)
		if err != nil {
			return err
		}
		pos = next
		select {
		case <-wake:
		case <-poll.C:
		case <-s.closed:
			return store.ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// deliver emits the changes under dir after pos and returns the revision
// of the last one.
func (s *Store) deliver(ctx context.Context, dir string, pos store.Version, emit store.Emit) (store.Version, error) {
	if err := s.refresh(); err != nil {
		return pos, fmt.Errorf("%w: %w", store.ErrWatchClosed, err)
	}
	s.mu.Lock()
	recs, err := s.idx.since(dir, pos)
	s.mu.Unlock()
	if err != nil {
		return pos, err
	}
	for _, r := range recs {
		ev := store.Event{Type: store.Delete, Entry: store.Entry{Key: r.Key, Version: r.Rev}}
		if r.Op == opPut {
			value, err := s.value(r.Rev)
			if errors.Is(err, fs.ErrNotExist) {
				return pos, fmt.Errorf("%w: the value of %q at revision %s was compacted", store.ErrWatchClosed, r.Key, r.Rev)
			}
			if err != nil {
				return pos, fmt.Errorf("%w: reading %q: %w", store.ErrWatchClosed, r.Key, err)
			}
			ev = store.Event{Type: store.Put, Entry: store.Entry{Key: r.Key, Value: value, Version: r.Rev}}
		}
		if !emit(ev) {
			return pos, ctx.Err()
		}
		pos = r.Rev
	}
	return pos, nil
}

// startNotify starts the inotify watch of the store's directory once:
// a change of the log by anyone wakes the watches.
func (s *Store) startNotify() error {
	if s.opts.NoFSNotify {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.notify != nil {
		return nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil // polling alone still sees every change
	}
	if err := w.Add(s.dir); err != nil {
		w.Close()
		return fmt.Errorf("watching %s: %w", s.dir, err)
	}
	s.notify = w
	go s.notifyLoop(w)
	return nil
}

func (s *Store) notifyLoop(w *fsnotify.Watcher) {
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if ev.Name == s.logPath() {
				s.broadcast()
			}
		case _, ok := <-w.Errors:
			if !ok {
				return
			}
			s.broadcast() // events may have been lost: look
		}
	}
}
