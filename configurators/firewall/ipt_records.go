package firewall

import (
	"encoding/json"
	"errors"
	"github.com/netagent/netagent/internal/statefile"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/netagent/netagent/items"
)

// chainRecord remembers how the kernel wrote down a chain's intended rules
// the last time netagent wrote them: iptables -S prints rules in its own
// normal form ("-s 10.0.0.1" comes back as "-s 10.0.0.1/32", "-p tcp
// --dport 22" as "-p tcp -m tcp --dport 22"). With it, a chain whose kernel
// rules equal Kernel is known to hold exactly Intended, so applying the
// same intent again writes nothing, and read-back returns the rules as the
// intent spelled them.
//
// A record is a cache, never a claim of ownership (the kernel mark is):
// it counts only while Kernel equals what the kernel holds, and losing it
// costs one atomic rewrite of the chain.
//
// A record is a value: put replaces it, and it shares its rules with the
// item and the view it was made from, which are never changed in place
// either.
type chainRecord struct {
	Family   string
	Table    string
	Chain    string
	Intended [][]string
	Kernel   [][]string
	// onDisk is the record as the records file holds it, once known: read
	// from the file, or made at the first write (quoting 10k rules for
	// every write of the file cost more than encoding it); encoded, its
	// JSON there (see appendRecords).
	onDisk  *recordFile
	encoded []byte
	// intendedLines and kernelLines are Intended as the restore input
	// wrote them and Kernel as iptables printed them, when known (see
	// putWritten): the file's IntendedRules and KernelRules.
	intendedLines, kernelLines []string
}

// recordFile is a record on disk. Each rule is one string, its arguments
// quoted as for iptables-restore (quoteArg; read with splitLine, as
// iptables-save's lines are): it decodes several times faster than a list
// of lists (a no-op apply of 10k rules spent half its CPU decoding
// records). A record written by an older version, with intended and
// kernel as lists of lists, still reads.
type recordFile struct {
	Family        string     `json:"family"`
	Table         string     `json:"table"`
	Chain         string     `json:"chain"`
	IntendedRules []string   `json:"intendedRules,omitempty"`
	KernelRules   []string   `json:"kernelRules,omitempty"`
	Intended      [][]string `json:"intended,omitempty"` // older versions'
	Kernel        [][]string `json:"kernel,omitempty"`   // older versions'
}

// file returns the record as written to disk.
func (r *chainRecord) file() (recordFile, error) {
	if r.onDisk != nil {
		return *r.onDisk, nil
	}
	f := recordFile{Family: r.Family, Table: r.Table, Chain: r.Chain,
		IntendedRules: r.intendedLines, KernelRules: r.kernelLines}
	var err error
	if f.IntendedRules == nil {
		if f.IntendedRules, err = joinRules(r.Intended); err != nil {
			return f, err
		}
	}
	if f.KernelRules == nil {
		if f.KernelRules, err = joinRules(r.Kernel); err != nil {
			return f, err
		}
	}
	r.onDisk, r.intendedLines, r.kernelLines = &f, nil, nil
	return f, nil
}

// json returns the record's JSON object in the records file.
func (r *chainRecord) json() ([]byte, error) {
	if r.encoded != nil {
		return r.encoded, nil
	}
	f, err := r.file()
	if err != nil {
		return nil, err
	}
	if r.encoded, err = appendRecordFile(make([]byte, 0, f.jsonSize()), &f); err != nil {
		return nil, err
	}
	return r.encoded, nil
}

// record reads a record file, of this version or an older one.
func (f *recordFile) record() (*chainRecord, error) {
	r := &chainRecord{Family: f.Family, Table: f.Table, Chain: f.Chain, Intended: f.Intended, Kernel: f.Kernel}
	var err error
	if f.IntendedRules != nil {
		if r.Intended, err = splitRules(f.IntendedRules); err != nil {
			return nil, err
		}
	}
	if f.KernelRules != nil {
		if r.Kernel, err = splitRules(f.KernelRules); err != nil {
			return nil, err
		}
	}
	if f.Intended == nil && f.Kernel == nil { // this version's: written again as it is
		r.onDisk = f
	}
	return r, nil
}

// joinRules writes each rule as one line of quoted arguments.
func joinRules(rules [][]string) ([]string, error) {
	if rules == nil {
		return nil, nil
	}
	out := make([]string, len(rules))
	var b strings.Builder
	for i, r := range rules {
		b.Reset()
		for j, a := range r {
			if j > 0 {
				b.WriteByte(' ')
			}
			if err := writeArg(&b, a); err != nil {
				return nil, err
			}
		}
		out[i] = b.String()
	}
	return out, nil
}

// splitRules reads joinRules' lines.
func splitRules(lines []string) ([][]string, error) {
	out := make([][]string, len(lines))
	for i, l := range lines {
		args, err := splitLine(l)
		if err != nil {
			return nil, err
		}
		if args == nil {
			args = []string{}
		}
		out[i] = args
	}
	return out, nil
}

// recordStore keeps the chain records of one namespace, in memory and, when
// dir is set, in one JSON file under dir (recordsFileName, replaced by a
// rename, not synced: it is a cache). One file rather than one per chain:
// the first apply of 100 chains spent about 100 ms creating and renaming
// 100 files. Writes inside batch are written once, at its end.
type recordStore struct {
	dir  string
	mu   sync.Mutex
	recs map[string]*chainRecord // by item name
	// legacy: the per-chain files of older versions read at load, removed
	// once the records file holds them.
	legacy []string
	// held: inside batch; dirty: a change is not written yet.
	held, dirty bool
	// stamp is the records file as this store last read or wrote it:
	// sharedRecords loads the records again when the file on disk is no
	// longer that one (removed, or written by another process).
	stamp fileStamp
}

// fileStamp tells one version of a file from another: its identity, size
// and modification time; the zero value is "no file".
type fileStamp struct {
	exists    bool
	dev, ino  uint64
	size      int64
	modTimeNs int64
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	st := fileStamp{exists: true, size: fi.Size(), modTimeNs: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.dev, st.ino = uint64(sys.Dev), sys.Ino
	}
	return st
}

// current reports whether s still holds what its directory does: a change
// not written yet keeps it; otherwise the records file must be the one s
// last read or wrote, and the directory of older files still there.
func (s *recordStore) current() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held || s.dirty {
		return true
	}
	if len(s.legacy) > 0 {
		if _, err := os.Stat(s.dir); err != nil {
			return false
		}
	}
	return stampOf(filepath.Join(s.dir, recordsFileName)) == s.stamp
}

// recordsFileName is the records' file in the namespace's record dir.
const recordsFileName = "chains.json"

// recordsOnDisk is the records file.
type recordsOnDisk struct {
	Chains []recordFile `json:"chains"`
}

// chainRecordDir is where a namespace's chain records live.
func chainRecordDir(stateDir, nsName string) string {
	if stateDir == "" {
		return ""
	}
	return filepath.Join(stateDir, "iptables", nsDirName(nsName))
}

// nsDirName names a namespace's directory: "self" for our own, "ns-<name>"
// for a named one.
func nsDirName(nsName string) string {
	if nsName == "" {
		return "self"
	}
	return "ns-" + url.PathEscape(nsName)
}

// recordStores are the record stores of this process, by directory: the
// configurator and every read-back of a namespace share one, loaded from
// disk once (a one-shot apply reads back twice and registers once: three
// loads of every record before). Records are a cache that counts only
// while it matches the kernel, so one that another process rewrote on disk
// since costs at most a rewrite of its chain.
var recordStores = struct {
	mu     sync.Mutex
	byPath map[string]*recordStore
}{byPath: make(map[string]*recordStore)}

// sharedRecords returns the process's record store of dir, loading it at
// the first call (a store without dir is never shared).
func sharedRecords(dir string) (*recordStore, error) {
	if dir == "" {
		return loadRecords(dir)
	}
	recordStores.mu.Lock()
	defer recordStores.mu.Unlock()
	if s, ok := recordStores.byPath[dir]; ok && s.current() {
		return s, nil
	}
	s, err := loadRecords(dir)
	if err != nil {
		return nil, err
	}
	recordStores.byPath[dir] = s
	return s, nil
}

// loadRecords reads the records under dir: the records file, and the
// per-chain files of older versions (the records file wins). Unreadable
// records are skipped: they are a cache (a record, statefile.LoadRecord:
// a damaged one counts as none, and `netagent recover --accept-damaged`
// lists it), and a chain without one is only rewritten.
func loadRecords(dir string) (*recordStore, error) {
	s := &recordStore{dir: dir, recs: make(map[string]*chainRecord)}
	if dir == "" {
		return s, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") || e.Name() == madeFileName || e.Name() == recordsFileName {
			continue // madeFileName shares the directory (ipt_made.go)
		}
		s.legacy = append(s.legacy, e.Name())
		data, err := statefile.ReadFile(filepath.Join(dir, e.Name()))
		var f recordFile
		if err != nil || json.Unmarshal(data, &f) != nil {
			continue
		}
		if rec, err := f.record(); err == nil {
			s.recs[rec.name()] = rec
		}
	}
	s.stamp = stampOf(filepath.Join(dir, recordsFileName))
	data, err := statefile.LoadRecord(filepath.Join(dir, recordsFileName))
	var all recordsOnDisk
	if err != nil || json.Unmarshal(data, &all) != nil {
		return s, nil
	}
	for _, f := range all.Chains {
		if rec, err := f.record(); err == nil {
			s.recs[rec.name()] = rec
		}
	}
	return s, nil
}

// name is the record's item name, "<family>/<table>/<chain>".
func (r *chainRecord) name() string { return r.Family + "/" + r.Table + "/" + r.Chain }

// get returns the record of a chain, or nil.
func (s *recordStore) get(name string) *chainRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recs[name]
}

// put remembers that c's rules are held by the kernel as kernel.
func (s *recordStore) put(c *items.IptablesChain, kernel [][]string) error {
	return s.putWritten(c, kernel, "", nil)
}

// putWritten is put with what is known already quoted for the records
// file: fill, the restore input that wrote c (see fillLines; "" if
// unknown), and kernelText, kernel as iptables printed it (see
// tableView.ruleText; nil if unknown).
func (s *recordStore) putWritten(c *items.IptablesChain, kernel [][]string, fill string, kernelText []string) error {
	rec := &chainRecord{Family: c.Family.String(), Table: c.Table, Chain: c.Chain,
		Intended: c.Rules, Kernel: kernel, intendedLines: filledRules(c, fill)}
	if len(kernelText) == len(kernel) {
		rec.kernelLines = kernelText
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs[rec.name()] = rec
	return s.changed()
}

// filledRules returns c's rules as fill (fillLines' output for c) wrote
// them, without "-A <chain>", as joinRules would; nil when fill is not
// that.
func filledRules(c *items.IptablesChain, fill string) []string {
	prefix := "-A " + c.Chain
	out := make([]string, 0, len(c.Rules))
	_, fill, _ = strings.Cut(fill, "\n") // the marker
	for fill != "" {
		var line string
		line, fill, _ = strings.Cut(fill, "\n")
		rest, ok := strings.CutPrefix(line, prefix)
		switch {
		case !ok || len(out) == len(c.Rules):
			return nil
		case rest == "":
			out = append(out, "")
		case rest[0] == ' ':
			out = append(out, rest[1:])
		default:
			return nil
		}
	}
	if len(out) != len(c.Rules) {
		return nil
	}
	return out
}

// drop forgets the record of c.
func (s *recordStore) drop(c *items.IptablesChain) error {
	rec := &chainRecord{Family: c.Family.String(), Table: c.Table, Chain: c.Chain}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.recs[rec.name()]; !ok {
		return nil
	}
	delete(s.recs, rec.name())
	return s.changed()
}

// batch runs f, whose puts and drops are written once, at its end.
func (s *recordStore) batch(f func()) error {
	s.mu.Lock()
	s.held = true
	s.mu.Unlock()
	f()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = false
	if !s.dirty {
		return nil
	}
	return s.write()
}

// changed writes the records after a change, unless inside batch. The
// caller holds s.mu.
func (s *recordStore) changed() error {
	s.dirty = true
	if s.held {
		return nil
	}
	return s.write()
}

// write writes every record to the records file and removes the older
// versions' files. The caller holds s.mu.
func (s *recordStore) write() error {
	if s.dir == "" {
		s.dirty = false
		return nil
	}
	names := sortedKeys(s.recs)
	parts := make([][]byte, 0, len(names))
	size := 0
	for _, n := range names {
		p, err := s.recs[n].json()
		if err != nil {
			continue // not writable (cannot happen for rules that were written): only a cache
		}
		parts = append(parts, p)
		size += len(p) + 1
	}
	data := appendRecords(make([]byte, 0, size+16), parts)
	path := filepath.Join(s.dir, recordsFileName)
	if err := statefile.SaveRecord(path, data, false); err != nil {
		return err
	}
	s.dirty, s.stamp = false, stampOf(path)
	for _, name := range s.legacy {
		if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	s.legacy = nil
	return nil
}

// cloneRules copies rules deeply: an item read back never shares slices
// with a view or a record of the package.
func cloneRules(rules [][]string) [][]string {
	if rules == nil {
		return nil
	}
	out := make([][]string, len(rules))
	for i, r := range rules {
		out[i] = append([]string(nil), r...)
	}
	return out
}

func init() {
	statefile.RegisterCache("iptables/*/"+recordsFileName, "the rules netagent wrote in each chain, as written and as the kernel spells them "+
		"(a cache, written without a sync: lost or damaged, a chain without its record is read back from the kernel and rewritten once)")
}
