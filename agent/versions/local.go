package versions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/netagent/netagent/configurators/statefile"
)

// Dir is the versions' directory in a state directory.
const Dir = "versions"

// Local is the Store in a state directory (see the package doc).
type Local struct {
	dir  string
	keep int

	// metas caches the metadata of versions read or written: a version
	// file never changes once it has its number, so a Write need not read
	// (and decode megabytes of) the current one again to learn its digest.
	// The file's identity is kept too, in case the directory was removed
	// and its numbers given again.
	mu    sync.Mutex
	metas map[int]cachedMeta
}

type cachedMeta struct {
	Meta
	file os.FileInfo
}

// Open returns the store of the state directory stateDir, keeping the
// newest keep versions (DefaultKeep if keep < 1). The directory is made on
// the first write.
func Open(stateDir string, keep int) *Local {
	if keep < 1 {
		keep = DefaultKeep
	}
	return &Local{dir: filepath.Join(stateDir, Dir), keep: keep}
}

var _ Store = (*Local)(nil)

func (l *Local) path(n int) string { return filepath.Join(l.dir, fmt.Sprintf("%08d.json", n)) }

// numbers lists the kept numbers, ascending.
func (l *Local) numbers() ([]int, error) {
	entries, err := os.ReadDir(l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading versions: %w", err)
	}
	var out []int
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(name, ".") || !e.Type().IsRegular() {
			continue
		}
		if n, err := strconv.Atoi(name); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Read returns version n.
func (l *Local) Read(n int) (*Version, error) {
	data, err := os.ReadFile(l.path(n))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("version %d: %w", n, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading version %d: %w", n, err)
	}
	var v Version
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("reading version %d: %w", n, err)
	}
	var compact bytes.Buffer // the digest is of the compact form, whoever wrote the file
	if err := json.Compact(&compact, v.Intent); err != nil {
		return nil, fmt.Errorf("reading version %d: %w", n, err)
	}
	v.Intent = compact.Bytes()
	l.remember(v.Meta())
	return &v, nil
}

// Current returns the newest version, nil if none.
func (l *Local) Current() (*Version, error) {
	for {
		nums, err := l.numbers()
		if err != nil || len(nums) == 0 {
			return nil, err
		}
		v, err := l.Read(nums[len(nums)-1])
		if errors.Is(err, ErrNotFound) {
			continue // pruned meanwhile (only older ones are): list again
		}
		return v, err
	}
}

// List returns the kept versions, oldest first.
func (l *Local) List() ([]Meta, error) {
	nums, err := l.numbers()
	if err != nil {
		return nil, err
	}
	out := make([]Meta, 0, len(nums))
	for _, n := range nums {
		m, err := l.meta(n)
		if errors.Is(err, ErrNotFound) {
			continue // pruned meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Write records v as the next version (see Store.Write).
func (l *Local) Write(v Version, expect int) (*Version, bool, error) {
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("creating %s: %w", l.dir, err)
	}
	for {
		cur, err := l.currentMeta()
		if err != nil {
			return nil, false, err
		}
		n := 0
		if cur != nil {
			n = cur.Number
		}
		if expect != Any && n != expect {
			return nil, false, &ConflictError{Current: n, Expected: expect}
		}
		if cur != nil && cur.Digest == v.Digest {
			same, err := l.unchanged(n, v.Intent)
			if errors.Is(err, ErrNotFound) {
				continue // pruned meanwhile: a newer one is current
			}
			return same, false, err
		}
		v.Number = n + 1
		err = l.create(v)
		if errors.Is(err, fs.ErrExist) {
			continue // another writer took the number: look again
		}
		if err != nil {
			return nil, false, err
		}
		l.remember(v.Meta())
		l.prune(v.Number)
		return &v, true, nil
	}
}

// currentMeta returns the metadata of the newest version, nil if none,
// from the cache when it holds that number.
func (l *Local) currentMeta() (*Meta, error) {
	for {
		nums, err := l.numbers()
		if err != nil || len(nums) == 0 {
			return nil, err
		}
		n := nums[len(nums)-1]
		m, err := l.meta(n)
		if errors.Is(err, ErrNotFound) {
			continue // pruned meanwhile (only older ones are): list again
		}
		if err != nil {
			return nil, err
		}
		return &m, nil
	}
}

// meta returns the metadata of version n, from the cache or the file.
func (l *Local) meta(n int) (Meta, error) {
	l.mu.Lock()
	c, ok := l.metas[n]
	l.mu.Unlock()
	if ok {
		if fi, err := os.Stat(l.path(n)); err == nil && os.SameFile(fi, c.file) && fi.ModTime().Equal(c.file.ModTime()) {
			return c.Meta, nil
		}
	}
	return l.readMeta(n)
}

// readMeta reads the metadata of version n from its file, which holds
// them before the intent (whoever wrote it: json.Marshal of a Version
// or encode), and stops there: the megabytes of the intent are neither
// decoded nor checked (Read does that).
func (l *Local) readMeta(n int) (Meta, error) {
	f, err := os.Open(l.path(n))
	if errors.Is(err, fs.ErrNotExist) {
		return Meta{}, fmt.Errorf("version %d: %w", n, ErrNotFound)
	}
	if err != nil {
		return Meta{}, fmt.Errorf("reading version %d: %w", n, err)
	}
	defer f.Close()
	m, err := decodeHead(json.NewDecoder(f), nil)
	if err != nil {
		return Meta{}, fmt.Errorf("reading version %d: %w", n, err)
	}
	l.remember(m)
	return m, nil
}

// unchanged returns version n, whose digest is that of intent: its
// head, read up to its intent, with intent (the same canonical bytes), so
// that a write that changes nothing (a no-op apply) does not read and
// check megabytes again. A file that does not list its documents before
// its intent (json.Marshal of a Version puts them after) is read whole.
func (l *Local) unchanged(n int, intent json.RawMessage) (*Version, error) {
	f, err := os.Open(l.path(n))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("version %d: %w", n, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading version %d: %w", n, err)
	}
	defer f.Close()
	var docs []string
	m, err := decodeHead(json.NewDecoder(f), &docs)
	if err != nil {
		return nil, fmt.Errorf("reading version %d: %w", n, err)
	}
	if len(docs) == 0 {
		return l.Read(n)
	}
	return &Version{Number: m.Number, Time: m.Time, Source: m.Source, Digest: m.Digest, Intent: intent, Documents: docs}, nil
}

// decodeHead decodes the members of a version's object that come before
// the end of its head. With docs nil the head is the metadata: it stops
// as soon as it has read the four members, skipping any other (the
// intent too, if it comes first). With docs it decodes the documents
// into *docs too and stops at the intent, which must come after the four.
func decodeHead(dec *json.Decoder, docs *[]string) (Meta, error) {
	var m Meta
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return m, fmt.Errorf("not a version object: %v", errors.Join(err, errors.New("want {")))
	}
	seen := 0 // of the four
	for dec.More() && (docs != nil || seen < 4) {
		t, err := dec.Token()
		if err != nil {
			return m, err
		}
		var dst any
		switch {
		case t == "intent" && docs != nil:
			if seen < 4 {
				return m, errors.New("incomplete version object")
			}
			return m, nil
		case t == "number":
			dst = &m.Number
		case t == "time":
			dst = &m.Time
		case t == "source":
			dst = &m.Source
		case t == "digest":
			dst = &m.Digest
		case t == "documents" && docs != nil:
			dst, seen = docs, seen-1
		default:
			dst, seen = new(json.RawMessage), seen-1 // not one of the four
		}
		if err := dec.Decode(dst); err != nil {
			return m, err
		}
		seen++
	}
	if docs != nil {
		return m, errors.New("no intent in the version object")
	}
	if seen < 4 {
		return m, errors.New("incomplete version object")
	}
	return m, nil
}

// remember caches m, forgetting the versions no longer kept.
func (l *Local) remember(m Meta) {
	fi, err := os.Stat(l.path(m.Number))
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.metas == nil {
		l.metas = map[int]cachedMeta{}
	}
	m.Time = m.Time.Round(0) // as read back: no monotonic reading
	l.metas[m.Number] = cachedMeta{m, fi}
	for n := range l.metas {
		if n <= m.Number-l.keep {
			delete(l.metas, n)
		}
	}
}

// create writes v under its number, failing with fs.ErrExist if that
// number is taken: a temporary file, synced, hard-linked to the final
// name, the directory synced.
func (l *Local) create(v Version) error {
	parts, err := encode(v)
	if err != nil {
		return fmt.Errorf("encoding version %d: %w", v.Number, err)
	}
	f, err := os.CreateTemp(l.dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("writing version %d: %w", v.Number, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	for _, p := range parts {
		if err == nil {
			_, err = f.Write(p)
		}
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp, l.path(v.Number))
	}
	if errors.Is(err, fs.ErrExist) {
		return err
	}
	if err == nil {
		err = statefile.SyncDir(l.dir)
	}
	if err != nil {
		return fmt.Errorf("writing version %d: %w", v.Number, err)
	}
	return nil
}

// prune removes all but the newest keep versions up to newest, and
// temporary files a crashed writer left. Failures are left for the next
// write.
func (l *Local) prune(newest int) {
	nums, _ := l.numbers()
	for _, n := range nums {
		if n <= newest-l.keep {
			os.Remove(l.path(n))
		}
	}
	entries, _ := os.ReadDir(l.dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleTemp {
				os.Remove(filepath.Join(l.dir, e.Name()))
			}
		}
	}
}

// staleTemp is the age after which a temporary file is a crashed
// writer's, not one being written.
const staleTemp = time.Minute

// encode returns the file of v, in parts to write one after the other:
// compact JSON (an intent of 100k routes indented is half whitespace) and
// a newline. v.Intent, canonical JSON already, is written as it is:
// json.Marshal would compact and validate megabytes again, and joining the
// parts would copy them.
func encode(v Version) ([][]byte, error) {
	head, err := json.Marshal(struct {
		Number    int       `json:"number"`
		Time      time.Time `json:"time"`
		Source    string    `json:"source"`
		Digest    string    `json:"digest"`
		Documents []string  `json:"documents,omitempty"`
	}{v.Number, v.Time, v.Source, v.Digest, v.Documents})
	if err != nil {
		return nil, err
	}
	if len(v.Intent) == 0 {
		return nil, errors.New("no intent")
	}
	head = append(head[:len(head)-1], `,"intent":`...)
	return [][]byte{head, v.Intent, []byte("}\n")}, nil
}
