package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/sirupsen/logrus"

	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/store"
)

// Names in a store's directory.
const (
	LogFile   = "log"
	LockFile  = "lock"
	ValuesDir = "values"
)

// Defaults of Options.
const (
	DefaultRetain       = 1000
	DefaultPollInterval = time.Second
	DefaultInlineMax    = 4096
	// MaxInline bounds Options.InlineMax: a log line stays far below
	// the reader's bound.
	MaxInline = 4 << 20
)

// Options tune a Store; the zero value is the defaults.
type Options struct {
	// Retain is how many revisions of history a compaction keeps for
	// watches that lag or resume (DefaultRetain); the log is compacted
	// when it holds twice that.
	Retain int
	// PollInterval is how often a watch looks at the log even when no
	// change notification came (DefaultPollInterval): a safety net for
	// writers in other processes should inotify miss them.
	PollInterval time.Duration
	// NoFSNotify turns inotify off: writes from other Stores and
	// processes are then seen by polling only.
	NoFSNotify bool
	// InlineMax: values of at most this many bytes are kept in their log
	// line rather than in a value file, so that writing one takes one
	// fsync instead of three (DefaultInlineMax; negative: none; at most
	// MaxInline, more is taken as MaxInline).
	InlineMax int
	// DropReplaced removes a value's file as soon as its key is replaced
	// or deleted, rather than at the compaction that drops its revision:
	// for a store nobody watches, whose values are large. A watch that
	// has not read the value yet ends with store.ErrWatchClosed.
	DropReplaced bool
	// Log is told when the store cuts the torn end of its log (see the
	// package doc); nil: logrus's standard logger.
	Log logrus.FieldLogger
}

// Store is the local backend (see the package doc).
type Store struct {
	dir  string
	opts Options

	wmu    sync.Mutex // serialises this Store's writers; the flock serialises Stores
	lockFD int

	mu      sync.Mutex
	idx     *index
	changed chan struct{} // closed and replaced when the log may have changed
	notify  *fsnotify.Watcher
	closed  chan struct{}
	once    sync.Once
}

var (
	_ store.Store     = (*Store)(nil)
	_ store.Compactor = (*Store)(nil)
)

// Open opens (making it if need be) the store in directory dir.
func Open(dir string, opts Options) (*Store, error) {
	if opts.Retain < 1 {
		opts.Retain = DefaultRetain
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.InlineMax == 0 {
		opts.InlineMax = DefaultInlineMax
	}
	opts.InlineMax = min(opts.InlineMax, MaxInline)
	if opts.Log == nil {
		opts.Log = logrus.StandardLogger()
	}
	// The directory is trusted as the state directory is (others who could
	// change it could plant the lock as a link, or forge values).
	if err := statefile.PrepareDir(dir); err != nil {
		return nil, fmt.Errorf("store %s: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ValuesDir), 0o700); err != nil {
		return nil, fmt.Errorf("creating store %s: %w", dir, err)
	}
	fd, err := statefile.OpenFile(dir, LockFile, syscall.O_RDWR|syscall.O_CREAT)
	if err != nil {
		return nil, fmt.Errorf("opening store lock: %w", err)
	}
	s := &Store{dir: dir, opts: opts, lockFD: fd, idx: newIndex(), changed: make(chan struct{}), closed: make(chan struct{})}
	if err := s.refresh(); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	if s.torn() {
		// What a crash tore off the end of the log is cut now, under the
		// lock (locked does it), rather than by the next write.
		if err := s.locked(context.Background(), func() error { return nil }); err != nil {
			syscall.Close(fd)
			return nil, err
		}
	}
	return s, nil
}

// torn reports whether the log read last ends with more than whole
// records: a torn tail (see tornTail).
func (s *Store) torn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idx.size > s.idx.off
}

// cutTorn cuts the torn tail of the log, if it has one, and syncs the
// cut; s's locks are held and the index is refreshed, so no writer is
// appending: what follows the last whole record is what a writer left
// that died before its write was acknowledged.
func (s *Store) cutTorn() error {
	if !s.torn() {
		return nil
	}
	s.mu.Lock()
	off, size := s.idx.off, s.idx.size
	s.mu.Unlock()
	path := s.logPath()
	f, err := openLog(path, syscall.O_WRONLY)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Truncate(off); err != nil {
		return fmt.Errorf("cutting the torn end of %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	s.opts.Log.Warnf("store %s: cut the torn end of %s: %d bytes after byte %d, a write a crash interrupted before it was acknowledged", s.dir, path, size-off, off)
	s.mu.Lock()
	s.idx.size = off
	s.mu.Unlock()
	return nil
}

func (s *Store) logPath() string { return filepath.Join(s.dir, LogFile) }

func (s *Store) valuePath(v store.Version) string {
	return filepath.Join(s.dir, ValuesDir, fmt.Sprintf("%016d", v))
}

// ErrDamaged: a value file that is not the one its log line names (cut
// short, emptied, changed, or another revision's).
var ErrDamaged = errors.New("damaged value file")

// value returns the value written at revision v: its log line's, or its
// file's (fs.ErrNotExist: dropped since the index was read). The file is
// read as a state file (statefile.ReadFile: no link followed, never
// blocking, its owner and mode checked, bounded) and checked against the
// SHA-256 its line recorded: a damaged one is ErrDamaged, never taken for
// the value.
func (s *Store) value(v store.Version) ([]byte, error) {
	s.mu.Lock()
	inline, ok := s.idx.inline[v]
	sum := s.idx.sums[v]
	s.mu.Unlock()
	if ok {
		return slices.Clone(inline), nil
	}
	path := s.valuePath(v)
	data, err := statefile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if sum != "" && valueSum(data) != sum {
		return nil, fmt.Errorf("%w %s: %d bytes whose SHA-256 is not the one the log recorded for revision %s", ErrDamaged, path, len(data), v)
	}
	return data, nil
}

// valueSum is a value file's Sum.
func valueSum(value []byte) string {
	sum := sha256.Sum256(value)
	return hex.EncodeToString(sum[:])
}

// refresh reads what other writers appended; s.mu must not be held.
func (s *Store) refresh() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idx.refresh(s.logPath())
}

func (s *Store) check(ctx context.Context) error {
	select {
	case <-s.closed:
		return store.ErrClosed
	default:
	}
	return ctx.Err()
}

// Read returns key's entry.
func (s *Store) Read(ctx context.Context, key string) (store.Entry, error) {
	if err := store.ValidateKey(key); err != nil {
		return store.Entry{}, err
	}
	var tried store.Version
	for {
		if err := s.check(ctx); err != nil {
			return store.Entry{}, err
		}
		if err := s.refresh(); err != nil {
			return store.Entry{}, err
		}
		s.mu.Lock()
		v, ok := s.idx.keys[key]
		s.mu.Unlock()
		if !ok {
			return store.Entry{}, store.NotFound(key)
		}
		value, err := s.value(v)
		if errors.Is(err, fs.ErrNotExist) && v != tried {
			tried = v
			continue // replaced and compacted meanwhile: read the log again
		}
		if err != nil {
			return store.Entry{}, fmt.Errorf("reading %q at revision %s: %w", key, v, err)
		}
		return store.Entry{Key: key, Value: value, Version: v}, nil
	}
}

// List returns the entries under prefix and the revision of the listing.
func (s *Store) List(ctx context.Context, prefix string) ([]store.Entry, store.Version, error) {
	dir, err := store.ValidatePrefix(prefix)
	if err != nil {
		return nil, 0, err
	}
	var tried store.Version
	for {
		if err := s.check(ctx); err != nil {
			return nil, 0, err
		}
		entries, rev, err := s.list(dir)
		if errors.Is(err, fs.ErrNotExist) && rev != tried {
			tried = rev
			continue // a value replaced and compacted meanwhile: read the log again
		}
		return entries, rev, err
	}
}

// ListKeys returns the keys under prefix and their versions, without
// their values: from the index alone, no value file is read.
func (s *Store) ListKeys(ctx context.Context, prefix string) ([]store.Entry, store.Version, error) {
	dir, err := store.ValidatePrefix(prefix)
	if err != nil {
		return nil, 0, err
	}
	if err := s.check(ctx); err != nil {
		return nil, 0, err
	}
	if err := s.refresh(); err != nil {
		return nil, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := s.idx.live(dir)
	entries := make([]store.Entry, len(keys))
	for i, k := range keys {
		entries[i] = store.Entry{Key: k, Version: s.idx.keys[k]}
	}
	return entries, s.idx.rev, nil
}

func (s *Store) list(dir string) ([]store.Entry, store.Version, error) {
	if err := s.refresh(); err != nil {
		return nil, 0, err
	}
	s.mu.Lock()
	rev := s.idx.rev
	keys := s.idx.live(dir)
	versions := make([]store.Version, len(keys))
	for i, k := range keys {
		versions[i] = s.idx.keys[k]
	}
	s.mu.Unlock()
	entries := make([]store.Entry, 0, len(keys))
	for i, k := range keys {
		value, err := s.value(versions[i])
		if err != nil {
			return nil, rev, fmt.Errorf("reading %q at revision %s: %w", k, versions[i], err)
		}
		entries = append(entries, store.Entry{Key: k, Value: value, Version: versions[i]})
	}
	return entries, rev, nil
}

// WriteCAS stores value under key if its version is expect.
func (s *Store) WriteCAS(ctx context.Context, key string, value []byte, expect store.Version) (store.Version, error) {
	if err := store.ValidateKey(key); err != nil {
		return 0, err
	}
	var rev store.Version
	err := s.write(ctx, func(idx *index) (*record, error) {
		if cur := idx.keys[key]; cur != expect {
			return nil, &store.CASError{Key: key, Expected: expect, Stored: cur}
		}
		rev = idx.rev + 1
		if len(value) <= s.opts.InlineMax {
			return &record{Op: opPut, Rev: rev, Key: key, Inline: true, Value: value}, nil
		}
		if err := statefile.WriteAtomic(s.valuePath(rev), value); err != nil {
			return nil, fmt.Errorf("writing %q: %w", key, err)
		}
		return &record{Op: opPut, Rev: rev, Key: key, Sum: valueSum(value)}, nil
	})
	if err != nil {
		return 0, err
	}
	return rev, nil
}

// DeleteCAS removes key if its version is expect.
func (s *Store) DeleteCAS(ctx context.Context, key string, expect store.Version) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	return s.write(ctx, func(idx *index) (*record, error) {
		cur, ok := idx.keys[key]
		if !ok {
			return nil, store.NotFound(key)
		}
		if cur != expect {
			return nil, &store.CASError{Key: key, Expected: expect, Stored: cur}
		}
		return &record{Op: opDel, Rev: idx.rev + 1, Key: key}, nil
	})
}

// write runs one write under the locks: change checks the index, which
// is up to date, and returns the record to append.
func (s *Store) write(ctx context.Context, change func(*index) (*record, error)) error {
	return s.locked(ctx, func() error { return s.writeLocked(change) })
}

// locked runs fn under the store's write locks (the process's and the
// log's), with the index refreshed.
func (s *Store) locked(ctx context.Context, fn func() error) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := flock(s.lockFD, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking store %s: %w", s.dir, err)
	}
	defer flock(s.lockFD, syscall.LOCK_UN)
	if err := s.refresh(); err != nil {
		return err
	}
	if err := s.cutTorn(); err != nil {
		return err
	}
	return fn()
}

// writeLocked is write's body, under the locks.
func (s *Store) writeLocked(change func(*index) (*record, error)) error {
	s.mu.Lock()
	r, err := change(s.idx)
	var replaced store.Version
	drop := false
	if err == nil && s.opts.DropReplaced {
		replaced, drop = s.idx.keys[r.Key]
		if _, inline := s.idx.inline[replaced]; inline {
			drop = false
		}
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if err := s.appendRecord(*r); err != nil {
		return err
	}
	// The write is done and durable: what follows cannot undo it, so
	// its failures are not the write's. A failed refresh is redone by the
	// next operation, a failed compaction by the next write (which also
	// removes a replaced value's file a failed removal left).
	if drop {
		_ = os.Remove(s.valuePath(replaced))
	}
	_ = s.refresh()
	s.broadcast()
	_ = s.maybeCompact()
	return nil
}

// appendRecord appends r to the log and syncs it: the write is
// acknowledged (returns) only once its line is on disk. The caller holds
// the lock, and locked cut any torn line a writer that died left.
func (s *Store) appendRecord(r record) error {
	path := s.logPath()
	s.mu.Lock()
	off := s.idx.off
	s.mu.Unlock()
	f, err := openLog(path, syscall.O_WRONLY|syscall.O_CREAT)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	line, _ := json.Marshal(r)
	if _, err := f.WriteAt(append(line, '\n'), off); err != nil {
		return fmt.Errorf("appending to %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	if off == 0 {
		return statefile.SyncDir(s.dir) // a new log: its name must survive too
	}
	return nil
}

// maybeCompact compacts when the history holds twice Retain revisions.
func (s *Store) maybeCompact() error {
	s.mu.Lock()
	rev, compacted := s.idx.rev, s.idx.compacted
	s.mu.Unlock()
	if rev-compacted <= store.Version(2*s.opts.Retain) {
		return nil
	}
	return s.compactLocked(rev - store.Version(s.opts.Retain))
}

// Compact drops the history up to revision rev (at most the current
// revision): watches from before it, and running watches that have not
// read past it, end with ErrWatchClosed; values replaced or deleted by
// then are removed.
func (s *Store) Compact(ctx context.Context, rev store.Version) error {
	return s.locked(ctx, func() error { return s.compactLocked(rev) })
}

func (s *Store) compactLocked(c store.Version) error {
	s.mu.Lock()
	c = min(c, s.idx.rev)
	if c <= s.idx.compacted {
		s.mu.Unlock()
		return nil
	}
	data := s.idx.compactedLog(c)
	dead := s.idx.deadValues(c)
	s.mu.Unlock()
	if err := statefile.WriteAtomic(s.logPath(), data); err != nil {
		return fmt.Errorf("compacting %s: %w", s.dir, err)
	}
	for _, v := range dead {
		if err := os.Remove(s.valuePath(v)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("compacting %s: %w", s.dir, err)
		}
	}
	if err := s.refresh(); err != nil {
		return err
	}
	s.broadcast()
	return nil
}

// broadcast wakes the watches.
func (s *Store) broadcast() {
	s.mu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// Close ends the running watches and releases the store.
func (s *Store) Close() error {
	s.once.Do(func() {
		close(s.closed)
		s.mu.Lock()
		n := s.notify
		s.mu.Unlock()
		if n != nil {
			n.Close() // outside s.mu: its loop may be waiting for it
		}
		s.wmu.Lock()
		syscall.Close(s.lockFD)
		s.wmu.Unlock()
	})
	return nil
}

// flock is flock(2), retried when a signal interrupts it.
func flock(fd, how int) error {
	for {
		err := syscall.Flock(fd, how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
