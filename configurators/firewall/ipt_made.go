package firewall

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/netagent/netagent/internal/statefile"
)

// Chains netagent made, for a chain whose mark someone removed.
//
// The marker rule is the chain's ownership mark, and a rule is easy to lose
// by hand: `iptables -F` flushes every chain of a table, `iptables -F
// NA-FWD` one, `iptables -D NA-FWD 1` the marker alone. Without more, the
// chain would be someone else's for ever: every apply fails it "not owned"
// and the drift check cannot repair it. So netagent also remembers, per
// namespace instance (boot, namespace inode: see statefile.NsIdentity), the
// chains it wrote, and forgets one when it deletes it. A chain without the
// mark is taken back only when it is in that record and holds nothing, or
// exactly the rules intended for it (see adoptable): someone's chain with
// rules of its own is never overwritten. A new boot or a new namespace of
// the same name starts with no record, as with no chains.

// madeFileName is the record's file in the namespace's chain record dir.
const madeFileName = "made.json"

// madeRecord is the file: the namespace instance and its chains by name.
type madeRecord struct {
	statefile.NsIdentity
	Chains []string `json:"chains"`
}

// madeStore keeps the record of one namespace instance. Writes are cache
// writes (no sync): the record is about this boot only, and a crash that
// loses the page cache takes the chains with it.
type madeStore struct {
	path string
	ns   statefile.NsIdentity
	mu   sync.Mutex
	set  map[string]bool
}

// loadMade reads the record in dir for ns (statefile.LoadJSON); one of
// another namespace instance, or unreadable, counts as empty: a chain
// without the mark is then someone else's, never adopted, which is the
// safe side of a loss (`netagent recover --accept-damaged` lists a damaged
// one). A nil store (no state
// directory) records nothing and knows nothing.
func loadMade(dir string, ns statefile.NsIdentity) *madeStore {
	if dir == "" {
		return nil
	}
	s := &madeStore{path: filepath.Join(dir, madeFileName), ns: ns, set: map[string]bool{}}
	var rec madeRecord
	if ok, err := statefile.LoadJSON(s.path, &rec); !ok || err != nil || rec.NsIdentity != ns {
		return s
	}
	for _, name := range rec.Chains {
		s.set[name] = true
	}
	return s
}

// has reports whether netagent made the chain (by item name) in this
// namespace instance and has not deleted it since.
func (s *madeStore) has(name string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.set[name]
}

// add records, in one write, that netagent wrote the chains.
func (s *madeStore) add(names ...string) error { return s.change(names, true) }

// remove forgets the chain: netagent deleted it.
func (s *madeStore) remove(name string) error { return s.change([]string{name}, false) }

func (s *madeStore) change(names []string, made bool) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for _, name := range names {
		if s.set[name] == made {
			continue
		}
		changed = true
		if made {
			s.set[name] = true
		} else {
			delete(s.set, name)
		}
	}
	if !changed {
		return nil
	}
	rec := madeRecord{NsIdentity: s.ns, Chains: make([]string, 0, len(s.set))}
	for n := range s.set {
		rec.Chains = append(rec.Chains, n)
	}
	slices.Sort(rec.Chains)
	if len(s.set) == 0 {
		if err := os.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return statefile.CacheJSON(s.path, rec)
}

// chainOwned reports whether a chain holding rules (kernel form) is
// netagent's: it carries the marker rule, or it is adoptable.
func chainOwned(rules, intended [][]string, rec *chainRecord, made bool) bool {
	return ownedRules(rules) || adoptable(rules, intended, rec, made)
}

// adoptable reports whether a chain without the marker rule (its kernel
// rules) is netagent's all the same: made by netagent in this namespace
// instance, and holding nothing, or exactly the intended rules (see
// rulesMatch; intended is nil when unknown).
func adoptable(rules, intended [][]string, rec *chainRecord, made bool) bool {
	if !made {
		return false
	}
	return len(rules) == 0 || intended != nil && rulesMatch(rules, intended, rec)
}

func init() {
	statefile.RegisterCache("iptables/*/"+madeFileName, "the chains netagent made in a namespace, adopted back when someone flushed their mark "+
		"(a cache, written without a sync: it is about one boot, and a power cut that can tear it takes the chains with it; "+
		"lost or damaged, it reads as empty, and a chain whose mark was flushed is then refused as someone else's, never overwritten)")
}
