package local

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"syscall"

	"github.com/netagent/netagent/internal/lineread"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/store"
)

// record is one line of the log.
type record struct {
	Op  string        `json:"op"` // opPut, opDel, opBase
	Rev store.Version `json:"rev"`
	Key string        `json:"key,omitempty"`
	// Compacted is a base line's compaction revision: the history up
	// to it is gone.
	Compacted store.Version `json:"compacted,omitempty"`
	// Inline: a put's value is Value, in the line, not in a value file
	// (Options.InlineMax).
	Inline bool   `json:"inline,omitempty"`
	Value  []byte `json:"value,omitempty"`
	// Sum is a value file's SHA-256 (hex): its read checks that the file
	// is whole and is this revision's (lines of earlier releases have
	// none, and their files are read unchecked).
	Sum string `json:"sum,omitempty"`
}

const (
	opPut  = "put"
	opDel  = "del"
	opBase = "base" // first line of a compacted log: Rev is the revision then
)

// index is what a Store knows of the log: the live keys and the history
// since the last compaction, and how far into which log file it read.
type index struct {
	dev, ino  uint64
	off       int64         // bytes of whole lines read
	size      int64         // the file's size when last read: more than off means a torn last line
	rev       store.Version // the newest revision
	compacted store.Version // watches from before it cannot be served
	keys      map[string]store.Version
	hist      []record // ordered by Rev; their Value is in inline
	// inline holds the values of the inline puts of keys and hist, by
	// revision.
	inline map[store.Version][]byte
	// sums holds the Sum of the value files of keys and hist, by revision.
	sums map[store.Version]string
	// head is the start of the file's first line: a log replaced by a
	// compaction may get the inode of the one it replaced (inodes are
	// reused), so dev and ino alone do not tell it from the file read.
	head []byte
}

// maxLine bounds a log line: an inline value (at most MaxInline) in
// base64 and its key, far below it. A longer line is damage, found
// without reading it whole.
const maxLine = 16 << 20

// headLen is how much of the first line head keeps: enough for a base
// line, whose compaction revision differs from one log to the next.
const headLen = 64

// sameHead reports whether f starts as the file idx has read.
func (idx *index) sameHead(f *os.File) bool {
	if idx.off == 0 {
		return true
	}
	buf := make([]byte, len(idx.head))
	n, _ := f.ReadAt(buf, 0)
	return bytes.Equal(buf[:n], idx.head)
}

func newIndex() *index {
	return &index{keys: map[string]store.Version{}, inline: map[store.Version][]byte{}, sums: map[store.Version]string{}}
}

// openLog opens the log at path as a state file (statefile.OpenFile:
// relative to its directory, no link followed, never blocking, a regular
// file owned by root or this process's user and writable by no one else):
// a log planted as a link is never read or written through, a FIFO never
// blocks a read.
func openLog(path string, flags int) (*os.File, error) {
	fd, err := statefile.OpenFile(filepath.Dir(path), filepath.Base(path), flags)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// refresh brings idx up to the log at path: the lines appended since it
// was last read, or the whole file when it was replaced (compacted).
func (idx *index) refresh(path string) error {
	f, err := openLog(path, syscall.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing written yet
	}
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Dev != idx.dev || st.Ino != idx.ino || !idx.sameHead(f) {
		*idx = *newIndex()
		idx.dev, idx.ino = st.Dev, st.Ino
	}
	idx.size = st.Size
	if st.Size <= idx.off {
		return nil
	}
	// The whole lines, one record each, each at most maxLine long; what
	// follows the last newline is a torn last line (its writer died, or
	// is writing): not a record.
	if idx.off == 0 {
		idx.head = nil
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, idx.off, st.Size-idx.off), 64<<10)
	var pos int64
	var tail []byte // the first line that is not a record, and what follows
	tooLong := func(at int64) error {
		return fmt.Errorf("%s at byte %d: a line longer than %d bytes, which no write makes", path, at, maxLine)
	}
	for {
		line, err := lineread.Read(r, maxLine)
		if errors.Is(err, lineread.ErrTooLong) {
			return tooLong(idx.off + pos + int64(len(tail)))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		if idx.off == 0 && len(idx.head) < headLen {
			idx.head = append(idx.head, line[:min(len(line), headLen-len(idx.head))]...)
		}
		if tail != nil {
			if len(tail)+len(line) > maxLine { // a torn write is one line
				return tooLong(idx.off + pos)
			}
			tail = append(tail, line...)
			continue
		}
		var rec record
		if len(bytes.TrimSpace(line)) > 0 {
			if json.Unmarshal(line, &rec) != nil {
				tail = line
				continue
			}
			idx.apply(rec)
		}
		pos += int64(len(line))
	}
	if tail != nil && !tornTail(tail) {
		line, _, _ := bytes.Cut(tail, []byte{'\n'})
		var rec record
		return fmt.Errorf("%s at byte %d: %w", path, idx.off+pos, json.Unmarshal(line, &rec))
	}
	// A torn tail is cut by the next writer (Store.cutTorn).
	idx.off += pos
	return nil
}

// tornTail reports whether the whole lines tail, the first of which is
// not a record, are what a crash can leave after the last acknowledged
// write: a write is acknowledged only once its line is fsynced, so only
// lines after every acknowledged one can be torn, and a torn append whose
// size reached the disk before its data reads as NUL bytes (blocks never
// written). A tail holding no NUL byte, or a line that is a record after
// it (an acknowledged write after the damage), is damage, not a tear.
func tornTail(tail []byte) bool {
	if bytes.IndexByte(tail, 0) < 0 {
		return false
	}
	for line := range bytes.Lines(tail) {
		var r record
		if len(bytes.TrimSpace(line)) > 0 && json.Unmarshal(line, &r) == nil {
			return false
		}
	}
	return true
}

func (idx *index) apply(r record) {
	switch r.Op {
	case opBase:
		idx.compacted = r.Compacted
		idx.rev = max(idx.rev, r.Rev)
		return
	case opPut:
		idx.keys[r.Key] = r.Rev
		if r.Inline {
			idx.inline[r.Rev] = append([]byte{}, r.Value...)
			r.Value = nil
		} else if r.Sum != "" {
			idx.sums[r.Rev] = r.Sum
		}
	case opDel:
		delete(idx.keys, r.Key)
	}
	idx.rev = max(idx.rev, r.Rev)
	idx.hist = append(idx.hist, r)
}

// since returns the records under dir after revision from, or an error
// wrapping ErrWatchClosed when the history before them was compacted.
func (idx *index) since(dir string, from store.Version) ([]record, error) {
	if from < idx.compacted {
		return nil, fmt.Errorf("%w: revision %s was compacted (history starts after %s)", store.ErrWatchClosed, from, idx.compacted)
	}
	i := sort.Search(len(idx.hist), func(i int) bool { return idx.hist[i].Rev > from })
	var out []record
	for _, r := range idx.hist[i:] {
		if store.InPrefix(r.Key, dir) {
			out = append(out, r)
		}
	}
	return out, nil
}

// live returns the live keys under dir, sorted.
func (idx *index) live(dir string) []string {
	var out []string
	for k := range idx.keys {
		if store.InPrefix(k, dir) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// compactedLog renders the log compacted at revision c: a base line, the
// live entries written at or before c, then the history after c.
func (idx *index) compactedLog(c store.Version) []byte {
	var buf bytes.Buffer
	line := func(r record) {
		data, _ := json.Marshal(r)
		buf.Write(data)
		buf.WriteByte('\n')
	}
	line(record{Op: opBase, Rev: idx.rev, Compacted: c})
	var old []record
	for k, v := range idx.keys {
		if v <= c {
			old = append(old, record{Op: opPut, Rev: v, Key: k})
		}
	}
	slices.SortFunc(old, func(a, b record) int { return int(a.Rev - b.Rev) })
	for _, r := range old {
		line(idx.withValue(r))
	}
	for _, r := range idx.hist {
		if r.Rev > c {
			line(idx.withValue(r))
		}
	}
	return buf.Bytes()
}

// withValue returns r with its inline value, or its value file's sum, if
// it has one.
func (idx *index) withValue(r record) record {
	if r.Op != opPut {
		return r
	}
	if v, ok := idx.inline[r.Rev]; ok {
		r.Inline, r.Value = true, v
	} else if sum, ok := idx.sums[r.Rev]; ok {
		r.Sum = sum
	}
	return r
}

// deadValues returns the revisions of values that a compaction at c
// drops: puts at or before c that are no longer live.
func (idx *index) deadValues(c store.Version) []store.Version {
	var out []store.Version
	for _, r := range idx.hist {
		if r.Rev > c {
			break
		}
		if _, inline := idx.inline[r.Rev]; r.Op == opPut && !inline && idx.keys[r.Key] != r.Rev {
			out = append(out, r.Rev)
		}
	}
	return out
}
