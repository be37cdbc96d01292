package versions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/netagent/netagent/agent/intent"
)

// DefaultKeep is how many versions are kept unless told otherwise.
const DefaultKeep = 50

// Any is the expected number of a Write that compares nothing.
const Any = -1

// Version is one accepted intended state.
type Version struct {
	Number int       `json:"number"`
	Time   time.Time `json:"time"`
	Source string    `json:"source"`
	// Digest is "sha256:" and the hex digest of Intent.
	Digest string `json:"digest"`
	// Intent is the merged intent, canonical JSON (see Canonical).
	Intent json.RawMessage `json:"intent"`
	// Documents names the documents it was merged from. Their contents
	// are not kept: the merged intent is what rollback applies, and an
	// edge device keeping 50 versions of 100k routes cannot afford two
	// copies of each.
	Documents []string `json:"documents,omitempty"`
}

// Meta is a Version without its intent: what List returns.
type Meta struct {
	Number int       `json:"number"`
	Time   time.Time `json:"time"`
	Source string    `json:"source"`
	Digest string    `json:"digest"`
}

// Meta returns v's metadata.
func (v *Version) Meta() Meta {
	return Meta{Number: v.Number, Time: v.Time, Source: v.Source, Digest: v.Digest}
}

// Short is the digest's first 12 hex digits.
func Short(digest string) string {
	const p = len("sha256:")
	if len(digest) < p+12 {
		return digest
	}
	return digest[p : p+12]
}

// Store keeps the versions of one target.
type Store interface {
	// Current returns the current (newest) version, nil if none.
	Current() (*Version, error)
	// Read returns version n (errors.Is ErrNotFound when it is not kept).
	Read(n int) (*Version, error)
	// List returns the kept versions, oldest first.
	List() ([]Meta, error)
	// Write records v (its Number is assigned) as the new current version
	// unless its digest is the current one's; expect is the number the
	// current version must have (0: none yet), or Any. It returns the
	// current version after the write and whether it is a new one.
	Write(v Version, expect int) (*Version, bool, error)
}

// ErrNotFound: the version is not kept.
var ErrNotFound = errors.New("no such version")

// ErrConflict: the current version is not the one expected.
var ErrConflict = errors.New("version conflict")

// ConflictError is a Write refused because the current version is not the
// expected one.
type ConflictError struct {
	Current, Expected int
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("current version is %d, not %d: someone else changed the intent; see netagent history", e.Current, e.Expected)
}

// Is makes errors.Is(err, ErrConflict) hold.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// Canonical returns the canonical JSON of files merged: the objects that
// several files define are left out of each (as the daemon applies them),
// the rest merged in file-name order and marshalled, and its digest.
// Rendering the result as one document gives the same items as rendering
// the files.
//
// Merge leaves out of the result every object that several files define,
// as WithoutConflicts leaves it out of each file, so the files are merged
// once: their conflicts are the caller's to report, and the identities of
// their objects are computed once (none for one file).
func Canonical(files map[string]*intent.Intent) (json.RawMessage, string, error) {
	unfit := map[string]*intent.Intent{} // nil or another version: Merge reports them
	for name, in := range files {
		if in == nil || in.Version != intent.Version {
			unfit[name] = in
		}
	}
	if len(unfit) > 0 {
		_, err := intent.Merge(unfit)
		return nil, "", fmt.Errorf("merging the intent: %w", err)
	}
	merged, _ := intent.Merge(files) // only conflicts: the caller's to report
	// The files' "drift" on the objects: rendered again (a rollback), the
	// version keeps the policies the files gave.
	data, err := merged.WithDriftPinned().Marshal() // json.Marshal's bytes, faster
	if err != nil {
		return nil, "", fmt.Errorf("encoding the intent: %w", err)
	}
	return data, Digest(data), nil
}

// Digest is the digest of a canonical intent.
func Digest(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// New builds the version of files (raw documents by name) from source,
// to be written.
func New(source string, files map[string][]byte) (Version, error) {
	parsed := make(map[string]*intent.Intent, len(files))
	for name, raw := range files {
		in, err := intent.Parse(raw)
		if err != nil {
			return Version{}, fmt.Errorf("%s: %w", name, err)
		}
		parsed[name] = in
	}
	return NewParsed(source, parsed)
}

// NewParsed is New for documents parsed already.
func NewParsed(source string, parsed map[string]*intent.Intent) (Version, error) {
	data, digest, err := Canonical(parsed)
	if err != nil {
		return Version{}, err
	}
	return Version{Time: time.Now(), Source: source, Digest: digest, Intent: data, Documents: slices.Sorted(maps.Keys(parsed))}, nil
}

// Record writes the version of files from source into s: the one function
// every writer (apply, the daemon, rollback, a confirmed trial) calls.
// expect is as for Store.Write.
func Record(s Store, source string, files map[string][]byte, expect int) (*Version, bool, error) {
	v, err := New(source, files)
	if err != nil {
		return nil, false, err
	}
	return s.Write(v, expect)
}

// Check fails with a *ConflictError when the current version of s is not
// expect (Any: never). Callers that hold the target's lock check before
// they change anything.
func Check(s Store, expect int) error {
	if expect == Any {
		return nil
	}
	cur, err := s.Current()
	if err != nil {
		return err
	}
	if n := number(cur); n != expect {
		return &ConflictError{Current: n, Expected: expect}
	}
	return nil
}

func number(v *Version) int {
	if v == nil {
		return 0
	}
	return v.Number
}

// Pick returns version n of s, or for 0 the one before the current (what
// rollback goes back to by default).
func Pick(s Store, n int) (*Version, error) {
	if n > 0 {
		return s.Read(n)
	}
	list, err := s.List()
	if err != nil {
		return nil, err
	}
	if len(list) < 2 {
		return nil, fmt.Errorf("no version before the current one: %w", ErrNotFound)
	}
	return s.Read(list[len(list)-2].Number)
}

// Rollback records version n of s (0: the one before the current) as a
// new version whose source is "rollback <n>" and whose intent and digest
// are n's (JunOS's rollback: n becomes the candidate, committed as a new
// version), unless n's digest is the current one's. expect is as for
// Store.Write. It returns version n and the current version after.
func Rollback(s Store, n, expect int) (back, cur *Version, err error) {
	if err := Check(s, expect); err != nil {
		return nil, nil, err
	}
	back, err = Pick(s, n)
	if err != nil {
		return nil, nil, err
	}
	cur, _, err = s.Write(RollbackTo(back), expect)
	return back, cur, err
}

// RollbackTo is the version to write for a rollback to back.
func RollbackTo(back *Version) Version {
	return Version{
		Time:   time.Now(),
		Source: fmt.Sprintf("rollback %d", back.Number),
		Digest: back.Digest,
		Intent: back.Intent,
	}
}
