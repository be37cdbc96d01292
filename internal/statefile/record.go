package statefile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A record is a state file in one envelope: a header line naming the
// format's version, the payload's length and its SHA-256, then the
// payload (JSON):
//
//	netagent-state 1 <length> <sha256 hex>\n
//	<payload>
//
// A record that is empty, cut short, longer, of another checksum or of an
// unknown version is damaged (ErrDamaged): what it held is lost, and its
// readers fail, naming the file, until `netagent recover --accept-damaged`
// sets it aside. A file without the header is of the previous format
// (plain JSON): it is read as valid while it parses, and its next write
// is in the envelope.
const (
	recordMagic   = "netagent-state"
	recordVersion = 1
)

// ErrDamaged marks a record that is not whole: see DamagedError.
var ErrDamaged = errors.New("damaged state file")

// DamagedError is a record that is not whole: the file and what is wrong.
type DamagedError struct {
	Path   string
	Reason string
}

func (e *DamagedError) Error() string {
	what := ""
	if d := Describe(e.Path); d != "" {
		what = " (it holds " + d + ")"
	}
	return fmt.Sprintf("%v %s: %s%s; what it held is not guessed: "+
		"`netagent recover --accept-damaged` sets it aside and starts it anew", ErrDamaged, e.Path, e.Reason, what)
}

// Is makes errors.Is(err, ErrDamaged) hold.
func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// envelope returns payload in the record envelope.
func envelope(payload []byte) []byte {
	sum := sha256.Sum256(payload)
	head := fmt.Sprintf("%s %d %d %s\n", recordMagic, recordVersion, len(payload), hex.EncodeToString(sum[:]))
	return append([]byte(head), payload...)
}

// open returns the payload of the record data read from path; legacy
// reports a file of the previous format (no envelope), whose payload is
// data itself.
func open(path string, data []byte) (payload []byte, legacy bool, err error) {
	damaged := func(format string, args ...any) ([]byte, bool, error) {
		return nil, false, &DamagedError{Path: path, Reason: fmt.Sprintf(format, args...)}
	}
	if len(data) == 0 {
		return damaged("empty")
	}
	if !bytes.HasPrefix(data, []byte(recordMagic+" ")) {
		if !json.Valid(data) {
			return damaged("neither a record (no header) nor whole JSON of the previous format")
		}
		return data, true, nil
	}
	head, payload, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return damaged("cut short in its header")
	}
	f := strings.Fields(string(head))
	if len(f) != 4 {
		return damaged("a header of %d fields, want 4", len(f))
	}
	if f[1] != strconv.Itoa(recordVersion) {
		return damaged("version %q, this netagent reads %d", f[1], recordVersion)
	}
	n, err := strconv.Atoi(f[2])
	switch {
	case err != nil || n < 0:
		return damaged("a header length of %q", f[2])
	case len(payload) < n:
		return damaged("truncated: %d of %d bytes", len(payload), n)
	case len(payload) > n:
		return damaged("%d bytes more than its header says (%d)", len(payload)-n, n)
	}
	sum := sha256.Sum256(payload)
	if hex.EncodeToString(sum[:]) != f[3] {
		return damaged("its checksum does not match its content")
	}
	return payload, false, nil
}

// LoadRecord reads the record at path (ReadFile) and returns its payload:
// fs.ErrNotExist when there is none, a *DamagedError when it is not whole.
func LoadRecord(path string) ([]byte, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	payload, _, err := open(path, data)
	return payload, err
}

// SaveRecord writes payload at path in the record envelope: durable
// (WriteAtomic) or as a cache (WriteCache). A record of a needed kind
// (Register) is always written durably: after a power cut an unsynced one
// may be found empty or torn, and a damaged needed record stops its
// readers until `netagent recover --accept-damaged`; only a cache's kind
// (RegisterCache), whose readers take a damaged one as lost, may skip the
// syncs.
func SaveRecord(path string, payload []byte, durable bool) error {
	return write(path, envelope(payload), durable || needed(path), 0)
}

// SaveJSON writes v as a record (JSON) to path, durably (WriteAtomic).
func SaveJSON(path string, v any) error { return saveJSON(path, v, true) }

// CacheJSON writes v as a record (JSON) to path as WriteCache does (but
// durably for a needed kind: see SaveRecord).
func CacheJSON(path string, v any) error { return saveJSON(path, v, false) }

// saveJSON writes v compact: a json.RawMessage in v is kept as it is
// (an indented write would change the bytes a digest was taken of).
func saveJSON(path string, v any, durable bool) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return SaveRecord(path, append(data, '\n'), durable)
}

// LoadJSON reads the record at path into v, and reports false when there
// is no such file. A record that is not whole, or whose JSON does not fit
// v, is a *DamagedError.
func LoadJSON(path string, v any) (bool, error) {
	payload, err := LoadRecord(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(payload, v); err != nil {
		return false, &DamagedError{Path: path, Reason: err.Error()}
	}
	return true, nil
}

// A kind of record is registered by the package that writes it: where it
// is under a state directory (a filepath.Glob pattern), what it holds, and
// whether it is a cache (what it held is learnt again: a lease, chain
// records) or needed (what it held is lost with it: the originals
// netagent restores).
var kinds = struct {
	sync.Mutex
	byPattern map[string]kind
}{byPattern: map[string]kind{}}

type kind struct {
	holds string
	cache bool
}

// Register registers a kind of needed record: pattern (relative to the
// state directory, as filepath.Glob matches it) and what its files hold.
func Register(pattern, holds string) { register(pattern, kind{holds: holds}) }

// RegisterCache registers a kind of record whose loss costs only work.
func RegisterCache(pattern, holds string) { register(pattern, kind{holds: holds, cache: true}) }

func register(pattern string, k kind) {
	kinds.Lock()
	defer kinds.Unlock()
	kinds.byPattern[pattern] = k
}

// Describe returns what the record at path holds, "" for no registered
// kind.
func Describe(path string) string { return kindOf(path).holds }

// IsCache reports whether the record at path is of a cache's kind.
func IsCache(path string) bool { return kindOf(path).cache }

// needed reports whether the record at path is of a registered kind that
// is no cache.
func needed(path string) bool {
	k := kindOf(path)
	return k.holds != "" && !k.cache
}

func kindOf(path string) kind {
	kinds.Lock()
	defer kinds.Unlock()
	parts := strings.Split(filepath.ToSlash(path), "/")
	for pattern, k := range kinds.byPattern {
		n := strings.Count(pattern, "/") + 1
		if n > len(parts) {
			continue
		}
		if ok, _ := filepath.Match(pattern, strings.Join(parts[len(parts)-n:], "/")); ok {
			return k
		}
	}
	return kind{}
}

// Scan returns the damaged records under the state directory dir, by
// path: every file of a registered kind that LoadRecord refuses as not
// whole (a refused or unreadable file is an error).
func Scan(dir string) ([]*DamagedError, error) {
	kinds.Lock()
	patterns := slices.Sorted(maps.Keys(kinds.byPattern))
	kinds.Unlock()
	var out []*DamagedError
	for _, p := range patterns {
		paths, err := filepath.Glob(filepath.Join(dir, p))
		if err != nil {
			return nil, err
		}
		for _, path := range paths {
			if IsSetAside(path) || strings.HasPrefix(filepath.Base(path), ".") {
				continue // set aside, or a write's temporary file (a crash leaves one): no record
			}
			_, err := LoadRecord(path)
			var d *DamagedError
			switch {
			case errors.As(err, &d):
				out = append(out, d)
			case err != nil && !errors.Is(err, fs.ErrNotExist):
				return nil, err
			}
		}
	}
	return out, nil
}

// setAsideMark is in the name of a record set aside (SetAside).
const setAsideMark = ".damaged-"

// IsSetAside reports whether the file name is of a record set aside: not
// a record any more (Scan skips it; a reader of a directory of records
// must too).
func IsSetAside(name string) bool { return strings.Contains(filepath.Base(name), setAsideMark) }

// SetAside renames the damaged record to <name>.damaged-<UTC time> in its
// directory (where Scan no longer finds it, and an operator can read it),
// durably, and returns the new path.
func SetAside(d *DamagedError) (string, error) {
	to := d.Path + setAsideMark + time.Now().UTC().Format("20060102T150405.000000000Z")
	if err := os.Rename(d.Path, to); err != nil {
		return "", fmt.Errorf("setting aside %s: %w", d.Path, err)
	}
	if err := SyncDir(filepath.Dir(d.Path)); err != nil {
		return "", fmt.Errorf("setting aside %s: %w", d.Path, err)
	}
	return to, nil
}

// UpdateJSON changes the record at path in place, under the file's lock:
// it loads it into a new T (zero when there is no file), calls f, and
// writes it back durably (SaveJSON) if f reports a change. A damaged
// record fails it, naming the file, and f is not called.
func UpdateJSON[T any](path string, f func(*T) bool) error {
	defer Lock(path)()
	var rec T
	if _, err := LoadJSON(path, &rec); err != nil {
		return err
	}
	if !f(&rec) {
		return nil
	}
	if err := SaveJSON(path, &rec); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
