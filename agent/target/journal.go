package target

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/netagent/netagent/configurators/statefile"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/reconciler"
)

// The before-image journal of a trial: <state dir>/trial/journal.
//
// Before the reconciler runs a wave of operations, the trial appends one
// record holding the before-image of every item the wave changes that no
// earlier record holds, and fsyncs it: only then does the wave reach the
// kernel. Each record is one line,
//
//	<crc32c of the JSON, 8 hex digits> <JSON>\n
//
// where the JSON is {"images":[{"type":T,"name":N,"absent":true} |
// {"type":T,"name":N,"item":{...fields...}}]}: "absent" for an item the
// wave creates (it did not exist before the trial), the item's fields as
// read back before the change for one it modifies or deletes. A record
// that a crash tore (no newline, or a checksum that does not match) ends
// the journal: it was never fsynced, so its wave never started, and
// nothing after it was written.

// journalName is the journal's file name in the trial directory.
const journalName = "journal"

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// BeforeImage is what an item was before the trial first changed it:
// Absent, or Item.
type BeforeImage struct {
	Ref    dg.ItemRef
	Absent bool
	Item   dg.Item
}

type imageJSON struct {
	Type   string          `json:"type"`
	Name   string          `json:"name"`
	Absent bool            `json:"absent,omitempty"`
	Item   json.RawMessage `json:"item,omitempty"`
}

type recordJSON struct {
	Images []imageJSON `json:"images"`
}

// Journal appends before-images to a trial's journal.
type Journal struct {
	f    *os.File
	path string
	seen map[dg.ItemRef]bool
	// batches counts the records written.
	batches int
}

// createJournal starts an empty journal at path (replacing any), synced
// with its directory.
func createJournal(path string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrJournal, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %v", ErrJournal, err)
	}
	if err := statefile.SyncDir(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %v", ErrJournal, err)
	}
	return &Journal{f: f, path: path, seen: make(map[dg.ItemRef]bool)}, nil
}

// Record writes the before-images of the items of ops that no earlier
// record holds, as one record, and fsyncs it. It is the reconciler's
// before-change hook (reconciler.WithBeforeChange).
func (j *Journal) Record(ops []reconciler.PlannedOp) error {
	var rec recordJSON
	for _, op := range ops {
		if j.seen[op.Ref] {
			continue
		}
		im := imageJSON{Type: op.Ref.Type, Name: op.Ref.Name}
		if op.Old == nil {
			im.Absent = true
		} else {
			data, err := encodeItem(op.Old)
			if err != nil {
				return fmt.Errorf("%w: %v", ErrJournal, err)
			}
			im.Item = data
		}
		rec.Images = append(rec.Images, im)
	}
	if len(rec.Images) == 0 {
		return nil
	}
	if err := j.write(rec); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrJournal, j.path, err)
	}
	for _, im := range rec.Images {
		j.seen[dg.ItemRef{Type: im.Type, Name: im.Name}] = true
	}
	j.batches++
	killPoint()
	return nil
}

func (j *Journal) write(rec recordJSON) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	line := make([]byte, 0, len(data)+10)
	line = hex.AppendEncode(line, binary.BigEndian.AppendUint32(nil, crc32.Checksum(data, crcTable)))
	line = append(line, ' ')
	line = append(line, data...)
	line = append(line, '\n')
	if _, err := j.f.Write(line); err != nil {
		return err
	}
	return j.f.Sync()
}

// Close closes the journal file.
func (j *Journal) Close() error { return j.f.Close() }

// ReadJournal reads the before-images of a journal, first record first,
// keeping for each item the first image (what it was before the trial).
// torn reports a record that a crash cut short, which ends the journal. A
// missing journal holds nothing.
func ReadJournal(path string) (images []BeforeImage, torn bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the trial journal: %w", err)
	}
	defer f.Close()
	seen := make(map[dg.ItemRef]bool)
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			return images, len(line) > 0, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("reading %s: %w", path, err)
		}
		rec, ok := parseRecord(line[:len(line)-1])
		if !ok {
			return images, true, nil
		}
		for _, im := range rec.Images {
			ref := dg.ItemRef{Type: im.Type, Name: im.Name}
			if seen[ref] {
				continue
			}
			seen[ref] = true
			b := BeforeImage{Ref: ref, Absent: im.Absent}
			if !im.Absent {
				if b.Item, err = decodeItem(im.Type, im.Item); err != nil {
					return nil, false, fmt.Errorf("%s: %s: %w", path, ref, err)
				}
			}
			images = append(images, b)
		}
	}
}

// parseRecord checks a record's checksum and decodes it.
func parseRecord(line []byte) (recordJSON, bool) {
	var rec recordJSON
	sum, data, ok := bytes.Cut(line, []byte{' '})
	if !ok || len(sum) != 8 {
		return rec, false
	}
	want, err := hex.DecodeString(string(sum))
	if err != nil {
		return rec, false
	}
	got := crc32.Checksum(data, crcTable)
	if binary.BigEndian.Uint32(want) != got {
		return rec, false
	}
	return rec, json.Unmarshal(data, &rec) == nil
}
