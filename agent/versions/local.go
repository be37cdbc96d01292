package versions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/netagent/netagent/store"
	"github.com/netagent/netagent/store/local"
)

// Keys of the versions in their store.
const (
	// IndexKey holds the kept versions' metadata, oldest first; writing
	// it (compare-and-swap) is what makes a version.
	IndexKey = "versions/index"
	// IntentDir holds the kept versions' intents, one key per digest
	// (IntentKey): versions of one intent (a rollback, an intent applied
	// again after another) share it.
	IntentDir = "versions/intents"
)

// StoreDir is the local store's directory in a state directory (package
// store/local): the versions live there.
const StoreDir = "store"

// Dir is the versions' directory of the format before the store (one
// file per version), in a state directory: Open migrates it into the
// store and removes it.
const Dir = "versions"

// IntentKey is the key of the intent of digest.
func IntentKey(digest string) string { return IntentDir + "/" + digest }

// Local is the Store kept in a store.Store (see the package doc): the
// state directory's (Open) or any other (OnStore).
type Local struct {
	stateDir string // "": on a store given to OnStore
	keep     int

	mu sync.Mutex
	st store.Store // nil until opened
	// owned: opened here (Open); Close closes it.
	owned bool
}

// Open returns the store of the state directory stateDir, keeping the
// newest keep versions (DefaultKeep if keep < 1). The store (StoreDir) is
// made on the first write; versions in the former format (Dir) are
// migrated into it when it is first opened.
func Open(stateDir string, keep int) *Local {
	return &Local{stateDir: stateDir, keep: keepOr(keep), owned: true}
}

// OnStore returns the versions kept in st under "versions/" (IndexKey,
// IntentDir), keeping the newest keep versions (DefaultKeep if keep < 1).
// Close does not close st.
func OnStore(st store.Store, keep int) *Local {
	return &Local{st: st, keep: keepOr(keep)}
}

func keepOr(keep int) int {
	if keep < 1 {
		return DefaultKeep
	}
	return keep
}

var _ Store = (*Local)(nil)

// Close releases the state directory's store (Open); a Local is usable
// again after it (it opens the store again).
func (l *Local) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.owned || l.st == nil {
		return nil
	}
	err := l.st.Close()
	l.st = nil
	return err
}

// store returns the store, opening the state directory's if need be; nil
// (and no error) when !create and the state directory holds no versions.
func (l *Local) store(create bool) (store.Store, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st != nil {
		return l.st, nil
	}
	dir, old := filepath.Join(l.stateDir, StoreDir), filepath.Join(l.stateDir, Dir)
	if !create && !exists(dir) && !exists(old) {
		return nil, nil
	}
	st, err := local.Open(dir, storeOptions)
	if err != nil {
		return nil, fmt.Errorf("opening the versions' store: %w", err)
	}
	if err := migrate(context.Background(), st, old, l.keep); err != nil {
		st.Close()
		return nil, err
	}
	l.st = st
	return st, nil
}

// storeOptions are the state directory store's: nobody watches it, so
// its history is short and a pruned intent's file goes at once; the
// index is kept in the log (one fsync to write it).
var storeOptions = local.Options{NoFSNotify: true, Retain: 4, DropReplaced: true, InlineMax: 64 << 10}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// indexEntry is one version in the index: its metadata and documents.
type indexEntry struct {
	Meta
	Documents []string `json:"documents,omitempty"`
}

// index is IndexKey's value.
type index struct {
	Versions []indexEntry `json:"versions"` // by number, ascending
}

func (x *index) last() *indexEntry {
	if len(x.Versions) == 0 {
		return nil
	}
	return &x.Versions[len(x.Versions)-1]
}

func (x *index) find(n int) *indexEntry {
	i, ok := slices.BinarySearchFunc(x.Versions, n, func(e indexEntry, n int) int { return e.Number - n })
	if !ok {
		return nil
	}
	return &x.Versions[i]
}

func (x *index) references(digest string) bool {
	return slices.ContainsFunc(x.Versions, func(e indexEntry) bool { return e.Digest == digest })
}

// readIndex reads the index and its store version (NoVersion: none yet).
func readIndex(ctx context.Context, st store.Store) (index, store.Version, error) {
	var x index
	e, err := st.Read(ctx, IndexKey)
	if errors.Is(err, store.ErrNotFound) {
		return x, store.NoVersion, nil
	}
	if err != nil {
		return x, 0, fmt.Errorf("reading the versions: %w", err)
	}
	if err := json.Unmarshal(e.Value, &x); err != nil {
		return x, 0, fmt.Errorf("reading the versions: %s: %w", IndexKey, err)
	}
	return x, e.Version, nil
}

// Read returns version n.
func (l *Local) Read(n int) (*Version, error) {
	return l.read(func(x *index) *indexEntry { return x.find(n) }, fmt.Sprintf("version %d", n))
}

// Current returns the newest version, nil if none.
func (l *Local) Current() (*Version, error) {
	v, err := l.read((*index).last, "the current version")
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return v, err
}

// read returns the version pick chooses in the index, with its intent.
func (l *Local) read(pick func(*index) *indexEntry, what string) (*Version, error) {
	ctx := context.Background()
	st, err := l.store(false)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	for {
		x, xv, err := readIndex(ctx, st)
		if err != nil {
			return nil, err
		}
		e := pick(&x)
		if e == nil {
			return nil, fmt.Errorf("%s: %w", what, ErrNotFound)
		}
		in, err := st.Read(ctx, IntentKey(e.Digest))
		if errors.Is(err, store.ErrNotFound) {
			if _, now, err2 := readIndex(ctx, st); err2 == nil && now != xv {
				continue // pruned meanwhile: look again
			}
			return nil, fmt.Errorf("version %d: its intent %s is missing from the store", e.Number, Short(e.Digest))
		}
		if err != nil {
			return nil, fmt.Errorf("reading version %d: %w", e.Number, err)
		}
		return &Version{Number: e.Number, Time: e.Time, Source: e.Source, Digest: e.Digest, Intent: in.Value, Documents: e.Documents}, nil
	}
}

// List returns the kept versions, oldest first: the index alone, no
// intent is read.
func (l *Local) List() ([]Meta, error) {
	st, err := l.store(false)
	if err != nil || st == nil {
		return nil, err
	}
	x, _, err := readIndex(context.Background(), st)
	if err != nil {
		return nil, err
	}
	out := make([]Meta, len(x.Versions))
	for i, e := range x.Versions {
		out[i] = e.Meta
	}
	return out, nil
}

// Write records v as the next version (see Store.Write): its intent
// first (unless a kept version has it), then the index that names it,
// compare-and-swap on the index read; then the intents no kept version
// names any more are deleted.
func (l *Local) Write(v Version, expect int) (*Version, bool, error) {
	if len(v.Intent) == 0 {
		return nil, false, errors.New("writing a version: no intent")
	}
	ctx := context.Background()
	st, err := l.store(true)
	if err != nil {
		return nil, false, err
	}
	for {
		x, xv, err := readIndex(ctx, st)
		if err != nil {
			return nil, false, err
		}
		cur := x.last()
		n := 0
		if cur != nil {
			n = cur.Number
		}
		if expect != Any && n != expect {
			return nil, false, &ConflictError{Current: n, Expected: expect}
		}
		if cur != nil && cur.Digest == v.Digest {
			// The same digest, the same canonical bytes: no read.
			return &Version{Number: n, Time: cur.Time, Source: cur.Source, Digest: cur.Digest, Intent: v.Intent, Documents: cur.Documents}, false, nil
		}
		if !x.references(v.Digest) {
			if err := writeIntent(ctx, st, v.Digest, v.Intent); err != nil {
				return nil, false, err
			}
		}
		v.Number = n + 1
		v.Time = v.Time.Round(0) // as read back: no monotonic reading
		next := x
		next.Versions = append(slices.Clip(x.Versions), indexEntry{Meta: v.Meta(), Documents: v.Documents})
		if extra := len(next.Versions) - l.keep; extra > 0 {
			next.Versions = next.Versions[extra:]
		}
		rev, err := writeIndex(ctx, st, next, xv)
		if errors.Is(err, store.ErrCASFailed) {
			continue // another writer made a version: look again
		}
		if err != nil {
			return nil, false, err
		}
		sweep(ctx, st, next, rev)
		return &v, true, nil
	}
}

func writeIndex(ctx context.Context, st store.Store, x index, expect store.Version) (store.Version, error) {
	raw, err := json.Marshal(x)
	if err != nil {
		return 0, fmt.Errorf("encoding the versions: %w", err)
	}
	rev, err := st.WriteCAS(ctx, IndexKey, raw, expect)
	if err != nil && !errors.Is(err, store.ErrCASFailed) {
		return 0, fmt.Errorf("writing the versions: %w", err)
	}
	return rev, err
}

// writeIntent stores the intent of digest. One already there (a crashed
// writer's, or a racing writer's of the same intent) is written again:
// its new store version tells a sweep that started before not to delete
// it.
func writeIntent(ctx context.Context, st store.Store, digest string, intent []byte) error {
	key, expect := IntentKey(digest), store.NoVersion
	for attempt := 0; ; attempt++ {
		_, err := st.WriteCAS(ctx, key, intent, expect)
		var ce *store.CASError
		if errors.As(err, &ce) && attempt < 10 {
			expect = ce.Stored
			continue
		}
		if err != nil {
			return fmt.Errorf("writing the intent %s: %w", Short(digest), err)
		}
		return nil
	}
}

// sweep deletes the intents that the index x (written at revision rev)
// does not name and that were written before it: those of the versions
// it pruned, and those of writers that crashed before their index. An
// intent written after rev is a racing writer's, whose index write is
// still to come. Failures are left for the next write.
func sweep(ctx context.Context, st store.Store, x index, rev store.Version) {
	keys, _, err := st.ListKeys(ctx, IntentDir)
	if err != nil {
		return
	}
	for _, e := range keys {
		digest := e.Key[len(IntentDir)+1:]
		if e.Version < rev && !x.references(digest) {
			_ = st.DeleteCAS(ctx, e.Key, e.Version)
		}
	}
}
