package host

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
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/netagent/netagent/configurators/l3"
	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/jsonstr"
	"github.com/netagent/netagent/internal/lineread"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
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
// {"type":T,"name":N,"item":{...fields...}}],"foreign":[...]}: "absent"
// for an item the wave creates (it did not exist before the trial), the
// item's fields as read back before the change for one it modifies or
// deletes. "foreign" holds someone else's objects that the wave puts at
// risk (l3.ForeignAtRisk): the routes through, and the permanent
// neighbours on, each link the wave deletes, changes, moves to another
// master or takes an address from, saved the first time a wave touches
// the link (not for links the trial created: what is on them came during
// the trial). The kernel drops them by itself with the link; the revert
// puts back those missing (RestoreForeign). "seq" numbers the records
// from 1. A wave's before-images and foreign objects may take several
// records (recordSplit); a line longer than maxRecordLine, or a journal
// larger than maxJournalSize, is damage, and so is a record with a
// foreign object that is none netagent saves (l3.CheckForeign: the revert
// sends them to the kernel as they are).
//
// How many records the journal holds is kept beside it, in
// <state dir>/trial/journal.count: one line, "<crc32c> <count>", of a
// fixed length, written over in place after each record is fsynced,
// before its wave runs (see journalcount.go for why it is not synced). A record that a crash tore (no newline,
// or a checksum that does not match) can only be the last line, and only
// one the count does not include: it was never fsynced, so its wave never
// started. Anything else the journal does not account for (a journal
// missing, emptied, cut short, overwritten, a damaged record before the
// last, fewer intact records than the count) is damage: the revert would
// not put back what the missing records held, so it does not start
// (RevertIncompleteError) and the trial stays pending.

// journalName is the journal's file name in the trial directory.
const journalName = "journal"

// The journal's bounds, which the reader holds it to: a planted or
// damaged journal (one huge line, a huge file) is damage, never read
// into memory whole.
//
// The writer splits what one wave journals into records of about
// recordSplit bytes each (a wave of 100,000 route before-images is some
// 25 MiB of JSON, the foreign routes saved on a link of a full table far
// more), so a record's line is at most recordSplit plus one image or one
// foreign object (each a few KiB at most: an interface's image with every
// attribute is under 2 KiB, a saved netlink message at most
// l3's 64 KiB): maxRecordLine is far above anything it writes, and a
// record that would exceed it (or a journal that would exceed
// maxJournalSize) fails the trial before its wave runs.
const (
	recordSplit    = 1 << 20
	maxRecordLine  = 8 << 20
	maxJournalSize = 1 << 30
)

// crcTable is the journal lines' CRC-32C table, made on first use (8 KB
// and the CPU check that every one-shot command would pay at start).
var crcTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

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
	Seq     int                `json:"seq"`
	Images  []imageJSON        `json:"images"`
	Foreign []l3.ForeignObject `json:"foreign,omitempty"`
}

// Journal appends before-images to a trial's journal.
type Journal struct {
	f    *os.File
	path string
	seen map[dg.ItemRef]bool
	// atRisk saves the foreign objects on links (l3.ForeignAtRisk in the
	// trial's namespace); nil saves none.
	atRisk func(devs []string) ([]l3.ForeignObject, error)
	// chosen fills in what the kernel chose for interfaces
	// (link.KernelChosen in the trial's namespace); nil fills in nothing.
	chosen func([]*items.Interface) ([]*items.Interface, error)
	// adopted finds, among the items a wave creates, those whose create
	// takes over someone else's object (the Runtime adopts: Adoptions),
	// as that object is; nil, or nil found: none.
	adopted func(creates *dg.Graph) (map[dg.ItemRef]dg.Item, error)
	// current is the current state of the running reconcile.
	current *dg.Graph
	// guarded holds the links whose foreign objects are saved, or were
	// created by the trial.
	guarded map[string]bool
	// batches counts the records written; count keeps it on disk.
	batches int
	count   *journalCount
	// size is the journal's size, in bytes.
	size int64
}

// createJournal starts an empty journal at path (replacing any), synced
// with its directory.
func createJournal(path string) (*Journal, error) {
	f, err := openJournal(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrJournal, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %v", ErrJournal, err)
	}
	c, err := createCount(countPath(path))
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := statefile.SyncDir(filepath.Dir(path)); err != nil {
		f.Close()
		c.close()
		return nil, fmt.Errorf("%w: %v", ErrJournal, err)
	}
	return &Journal{f: f, path: path, seen: make(map[dg.ItemRef]bool), guarded: make(map[string]bool), count: c}, nil
}

// Record writes the before-images of the items of ops that no earlier
// record holds, as one record, and fsyncs it. It is the reconciler's
// before-change hook (reconciler.WithBeforeChange).
func (j *Journal) Record(ops []reconciler.PlannedOp) error {
	rec := newRecord(len(ops), j.batches+1)
	if len(j.seen) == 0 && len(ops) > 64 {
		j.seen = make(map[dg.ItemRef]bool, len(ops)) // no growing in steps
	}
	var images []BeforeImage
	for _, op := range ops {
		if !j.seen[op.Ref] {
			images = append(images, BeforeImage{Ref: op.Ref, Absent: op.Old == nil, Item: op.Old})
		}
	}
	if err := j.withAdopted(images, ops); err != nil {
		return err
	}
	devs := j.linksAtRisk(ops)
	if len(devs) > 0 {
		// What netagent owns on those links goes with them too (an
		// IPv6 address when its link goes down), and the links
		// themselves may change (a bridge takes its ports' MAC and
		// MTU): their before-image is what they are now.
		inOps := make(map[dg.ItemRef]bool, len(ops))
		for _, op := range ops {
			inOps[op.Ref] = true
		}
		for _, it := range append(j.linksOf(devs), j.ownedOn(devs)...) {
			if ref := dg.Ref(it); !j.seen[ref] && !inOps[ref] {
				inOps[ref] = true
				images = append(images, BeforeImage{Ref: ref, Item: it})
			}
		}
		if j.atRisk != nil {
			var err error
			if rec.foreign, err = j.atRisk(devs); err != nil {
				return fmt.Errorf("%w: %v", ErrJournal, err)
			}
		}
	}
	if err := j.withChosen(images); err != nil {
		return err
	}
	if len(images) == 0 && len(rec.foreign) == 0 {
		return nil
	}
	// One record, or several when it would outgrow recordSplit: each a
	// line the reader's bound (maxRecordLine) holds.
	recs := []*record{rec}
	next := func() {
		rec = newRecord(0, j.batches+len(recs)+1)
		recs = append(recs, rec)
	}
	for _, im := range images {
		if len(rec.line) > recordSplit {
			next()
		}
		if err := rec.image(im.Ref, im.Item); err != nil {
			return err
		}
	}
	foreign := recs[0].foreign
	size := len(rec.line)
	recs[0].foreign = nil
	for _, o := range foreign {
		est := foreignSize(o)
		if size+est > recordSplit && (len(rec.refs) > 0 || len(rec.foreign) > 0) {
			next()
			size = len(rec.line)
		}
		rec.foreign = append(rec.foreign, o)
		size += est
	}
	for _, rec := range recs {
		if err := j.write(rec); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrJournal, j.path, err)
		}
		j.batches++
		killPoint() // the record is on disk, the count does not hold it yet
		if err := j.count.set(j.batches); err != nil {
			return err
		}
		for i, ref := range rec.refs {
			j.seen[ref] = true
			if rec.absent[i] && ref.Type == items.TypeInterface {
				j.guarded[ref.Name] = true
			}
		}
	}
	for _, d := range devs {
		j.guarded[d] = true
	}
	killPoint()
	return nil
}

// withChosen gives the before-images of netagent's virtual interfaces
// what the kernel chose for them and the hint left unset, their MAC and
// MTU (see link.KernelChosen), so that the revert puts those back too:
// a recreated VXLAN gets its old MAC again instead of a new random one,
// and its bridge, which took the port's MAC and MTU, its own.
func (j *Journal) withChosen(images []BeforeImage) error {
	if j.chosen == nil {
		return nil
	}
	var at []int
	var ifs []*items.Interface
	for i, im := range images {
		if it, ok := im.Item.(*items.Interface); ok && it.Kind != items.KindPhysical {
			at = append(at, i)
			ifs = append(ifs, it)
		}
	}
	if len(ifs) == 0 {
		return nil
	}
	filled, err := j.chosen(ifs)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrJournal, err)
	}
	for n, i := range at {
		images[i].Item = filled[n]
	}
	return nil
}

// withAdopted gives the creates of images that adopt someone else's
// object (adopted) that object as their before-image instead of
// "absent": a revert keeps it, as it was, rather than deleting it (it
// stays marked as netagent's).
func (j *Journal) withAdopted(images []BeforeImage, ops []reconciler.PlannedOp) error {
	if j.adopted == nil {
		return nil
	}
	creates := dg.New("creates")
	for _, op := range ops {
		if op.Old == nil && op.New != nil {
			creates.Put(op.New)
		}
	}
	if creates.Len() == 0 {
		return nil
	}
	found, err := j.adopted(creates)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrJournal, err)
	}
	for i, im := range images {
		if f, ok := found[im.Ref]; ok && im.Absent {
			images[i] = BeforeImage{Ref: im.Ref, Item: f}
		}
	}
	return nil
}

// linksOf returns the items of the current state (SetCurrent) of the
// links devs that are netagent's virtual interfaces.
func (j *Journal) linksOf(devs []string) []dg.Item {
	if j.current == nil {
		return nil
	}
	var out []dg.Item
	for _, d := range devs {
		if it, ok := j.current.Get(items.InterfaceRef(d)); ok {
			if l, ok := it.(*items.Interface); ok && l.Kind != items.KindPhysical {
				out = append(out, it)
			}
		}
	}
	return out
}

// record is one journal record being encoded: the JSON of recordJSON,
// written directly (encoding/json's reflection and its re-validation of
// each item's raw JSON cost as much as the wave's kernel changes).
type record struct {
	// line is the record's line so far: room for the checksum and the
	// space, then the JSON up to the last element of "images".
	line    []byte
	refs    []dg.ItemRef
	absent  []bool
	foreign []l3.ForeignObject
}

// imageSize is about the size of an absent image of a route.
const imageSize = 72

// newRecord starts record seq, of about n images.
func newRecord(n, seq int) *record {
	r := &record{line: make([]byte, 9, 9+len(`{"seq":,"images":[`)+20+n*imageSize), refs: make([]dg.ItemRef, 0, n), absent: make([]bool, 0, n)}
	r.line = append(r.line, `{"seq":`...)
	r.line = strconv.AppendInt(r.line, int64(seq), 10)
	r.line = append(r.line, `,"images":[`...)
	return r
}

// image adds the before-image of ref: old, or absent for nil.
func (r *record) image(ref dg.ItemRef, old dg.Item) error {
	if len(r.refs) > 0 {
		r.line = append(r.line, ',')
	}
	r.line = append(r.line, `{"type":`...)
	r.line = jsonstr.Append(r.line, ref.Type)
	r.line = append(r.line, `,"name":`...)
	r.line = jsonstr.Append(r.line, ref.Name)
	if old == nil {
		r.line = append(r.line, `,"absent":true}`...)
	} else {
		data, err := encodeItem(old)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrJournal, err)
		}
		r.line = append(r.line, `,"item":`...)
		r.line = append(r.line, data...)
		r.line = append(r.line, '}')
	}
	r.refs = append(r.refs, ref)
	r.absent = append(r.absent, old == nil)
	return nil
}

// ownedOn returns the items of the current state (SetCurrent) that
// depend on one of the links devs, directly or through an address on
// them: what the kernel may drop with them.
func (j *Journal) ownedOn(devs []string) []dg.Item {
	if j.current == nil {
		return nil
	}
	on := make(map[dg.ItemRef]bool, 2*len(devs))
	for _, d := range devs {
		on[items.InterfaceRef(d)], on[items.LinkRef(d)] = true, true
	}
	var out []dg.Item
	for range 3 { // addresses on the links, then what depends on those
		n := len(out)
		for it := range j.current.Items() {
			ref := dg.Ref(it)
			if it.External() || on[ref] {
				continue
			}
			for _, d := range it.Dependencies() {
				if on[d.RequiredItem] {
					on[ref] = true
					out = append(out, it)
					break
				}
			}
		}
		if len(out) == n {
			break
		}
	}
	return out
}

// SetCurrent gives the journal the current state a reconcile starts from
// (see ownedOn).
func (j *Journal) SetCurrent(g *dg.Graph) { j.current = g }

// linksAtRisk returns the links whose foreign objects the kernel may drop
// when ops run, and that no earlier record guarded: the links the ops
// delete or change (a link set down, given another MAC or MTU, recreated)
// and their masters (a bridge takes its ports' MTU), the ports and masters of the ports they add, change or remove (a bridge
// changes its MAC when its ports change), and the links of the addresses
// they delete or recreate (the last address of a link takes the routes
// through it). Links the trial created are left out.
func (j *Journal) linksAtRisk(ops []reconciler.PlannedOp) []string {
	var devs []string
	var added map[string]bool
	add := func(name string) {
		if name == "" || j.guarded[name] || added[name] {
			return
		}
		if added == nil {
			added = make(map[string]bool)
		}
		added[name] = true
		devs = append(devs, name)
	}
	for _, op := range ops {
		switch old := op.Old.(type) {
		case *items.Interface:
			add(old.IfName)
			add(j.masterOf(old.IfName))
		case *items.Address:
			if op.Op != reconciler.OpCreate {
				add(old.Dev)
			}
		}
		for _, it := range []dg.Item{op.Old, op.New} {
			if p, ok := it.(*items.Port); ok {
				add(p.IfName)
				add(p.Master)
			}
		}
	}
	return devs
}

// masterOf returns the master of the link name in the current state
// (SetCurrent), "" for none.
func (j *Journal) masterOf(name string) string {
	if j.current == nil {
		return ""
	}
	if it, ok := j.current.Get(dg.ItemRef{Type: items.TypePort, Name: name}); ok {
		if p, ok := it.(*items.Port); ok {
			return p.Master
		}
	}
	return ""
}

func (j *Journal) write(rec *record) error {
	line := append(rec.line, ']')
	if len(rec.foreign) > 0 {
		data, err := json.Marshal(rec.foreign)
		if err != nil {
			return err
		}
		line = append(line, `,"foreign":`...)
		line = append(line, data...)
	}
	line = append(line, '}')
	sum := binary.BigEndian.AppendUint32(nil, crc32.Checksum(line[9:], crcTable()))
	hex.Encode(line[:8], sum)
	line[8] = ' '
	line = append(line, '\n')
	switch {
	case len(line) > maxRecordLine:
		return fmt.Errorf("a record of %d bytes: more than the %d a journal's line may hold (one before-image too large)", len(line), maxRecordLine)
	case j.size+int64(len(line)) > maxJournalSize:
		return fmt.Errorf("the journal would grow to %d bytes: more than the %d it may hold (the trial changes too much at once)", j.size+int64(len(line)), maxJournalSize)
	}
	if _, err := j.f.Write(line); err != nil {
		return err
	}
	j.size += int64(len(line))
	return j.f.Sync()
}

// foreignSize is about the size of o in a record's JSON.
func foreignSize(o l3.ForeignObject) int {
	n := 48 + len(o.Kind) + (len(o.Msg)+2)/3*4
	for _, d := range o.Devs {
		n += len(d) + 3
	}
	return n
}

// Close closes the journal's files.
func (j *Journal) Close() error { return errors.Join(j.f.Close(), j.count.close()) }

// ReadJournal reads the before-images of a journal, first record first,
// keeping for each item the first image (what it was before the trial).
// torn reports a record that a crash cut short, which ends the journal. A
// missing journal holds nothing. What the journal does not account for
// (see journaled.Unaccounted) is not an error here: the revert refuses it.
func ReadJournal(path string) (images []BeforeImage, torn bool, err error) {
	j, err := readJournal(path)
	return j.Images, j.Torn, err
}

// journaled is what a journal holds: the before-images, and the foreign
// objects at risk, first record first.
type journaled struct {
	Images  []BeforeImage
	Foreign []l3.ForeignObject
	Torn    bool
	// Records is how many intact records the journal holds, Count how
	// many the trial wrote (journal.count; -1: unknown), Damage what is
	// wrong with the journal or the count ("": nothing).
	Records, Count int
	Damage         string
	// Broken: damage no crash makes (a bad line before the last, a
	// record out of sequence), whatever the count says.
	Broken bool
}

// Unaccounted says what of the trial's records the journal does not
// account for, "" when it accounts for every one.
func (j journaled) Unaccounted(path string) string {
	switch {
	case j.Count < 0:
		return fmt.Sprintf("how many records the trial journaled is unknown (%s), and %s holds %d", j.Damage, path, j.Records)
	case j.Records >= j.Count && j.Broken:
		return fmt.Sprintf("what follows record %d of the %d the trial journaled (%s: %s)", j.Records, j.Count, path, j.Damage)
	case j.Records >= j.Count:
		return ""
	}
	missing := fmt.Sprintf("record %d", j.Count)
	if j.Records+1 < j.Count {
		missing = fmt.Sprintf("records %d-%d", j.Records+1, j.Count)
	}
	return fmt.Sprintf("%s of the %d the trial journaled (%s: %s)", missing, j.Count, path, j.Damage)
}

// readJournal reads a journal and its count (see ReadJournal).
func readJournal(path string) (journaled, error) {
	out, err := readRecords(path)
	if err != nil {
		return journaled{}, err
	}
	n, why := readCount(countPath(path))
	switch {
	case why != "":
		out.Count = -1
		out.Damage = strings.Join(slices.DeleteFunc([]string{why, out.Damage}, func(s string) bool { return s == "" }), "; ")
	default:
		out.Count = n
		if out.Damage == "" && out.Records < n {
			out.Damage = "it ends there"
		}
	}
	return out, nil
}

// readRecords reads the records of a journal, up to the first that is
// not intact: a torn last line (Torn), or damage (Damage says which).
func readRecords(path string) (journaled, error) {
	var out journaled
	f, err := openJournal(path, os.O_RDONLY)
	if errors.Is(err, os.ErrNotExist) {
		out.Damage = "the journal is missing"
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("reading the trial journal: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return out, fmt.Errorf("reading %s: %w", path, err)
	} else if st.Size() > maxJournalSize {
		out.Damage = fmt.Sprintf("the journal is %d bytes, more than the %d a trial writes", st.Size(), maxJournalSize)
		out.Broken = true
		return out, nil
	}
	seen := make(map[dg.ItemRef]bool)
	r := bufio.NewReaderSize(f, 1<<20)
	for line := 1; ; line++ {
		data, err := lineread.Read(r, maxRecordLine)
		if errors.Is(err, lineread.ErrTooLong) {
			out.Damage = fmt.Sprintf("line %d is longer than the %d bytes a record may have", line, maxRecordLine)
			out.Broken = true // the writer writes none: no crash makes one
			return out, nil
		}
		if err == io.EOF {
			switch {
			case len(data) > 0:
				out.Torn = true
				out.Damage = fmt.Sprintf("line %d is cut short", line)
			case line == 1:
				out.Damage = "the journal is empty"
			}
			return out, nil
		}
		if err != nil {
			return journaled{}, fmt.Errorf("reading %s: %w", path, err)
		}
		rec, why := parseRecord(data[:len(data)-1])
		if why == "" && rec.Seq != out.Records+1 {
			why = fmt.Sprintf("it is record %d, not %d", rec.Seq, out.Records+1)
			out.Broken = true
		}
		for i, o := range rec.Foreign {
			if why != "" {
				break
			}
			// Replayed to the kernel by the revert: held to what
			// netagent saves, or refused as damage.
			if err := l3.CheckForeign(o); err != nil {
				why = fmt.Sprintf("foreign object %d: %v", i+1, err)
				out.Broken = true // its checksum matched: no crash makes it
			}
		}
		if why != "" {
			out.Damage = fmt.Sprintf("line %d: %s", line, why)
			if _, err := r.Peek(1); err == io.EOF {
				out.Torn = !out.Broken // the last line: torn by a crash, if the count does not hold it
			} else {
				out.Damage += ", and more follows"
				out.Broken = true
			}
			return out, nil
		}
		out.Records++
		out.Foreign = append(out.Foreign, rec.Foreign...)
		for _, im := range rec.Images {
			ref := dg.ItemRef{Type: im.Type, Name: im.Name}
			if seen[ref] {
				continue
			}
			seen[ref] = true
			b := BeforeImage{Ref: ref, Absent: im.Absent}
			if !im.Absent {
				if b.Item, err = decodeItem(im.Type, im.Item); err != nil {
					return journaled{}, fmt.Errorf("%s: %s: %w", path, ref, err)
				}
			}
			out.Images = append(out.Images, b)
		}
	}
}

// parseRecord checks a record's checksum and decodes it; why says what
// is wrong with it ("": nothing).
func parseRecord(line []byte) (recordJSON, string) {
	var rec recordJSON
	sum, data, ok := bytes.Cut(line, []byte{' '})
	if !ok || len(sum) != 8 {
		return rec, "not a record"
	}
	if !checksumOK(sum, data) {
		return rec, "its checksum does not match"
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Sprintf("decoding it: %v", err)
	}
	return rec, ""
}

// checksumOK reports whether sum (8 hex digits) is the crc32c of data.
func checksumOK(sum, data []byte) bool {
	want, err := hex.DecodeString(string(sum))
	return err == nil && binary.BigEndian.Uint32(want) == crc32.Checksum(data, crcTable())
}
