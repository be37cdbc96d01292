package nftables

import (
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/statefile"
)

// The tables netagent made, in the state directory.
//
// The mark (items.NftOwnerChain) is what makes a table netagent's; the
// record is the second witness, as links.json and iptables/*/made.json
// are for links and chains: <stateDir>/nftables.json holds, per namespace
// instance (statefile.NsIdentity: boot, namespace inode), the family and
// name of every table netagent made there and when. It is written
// (durably) before the batch that creates a table, and the entry is
// removed after the batch that deletes it. The record never makes a table
// netagent's by itself: a recorded table without the mark (someone
// deleted the mark chain, or deleted the table and made one of the same
// name) is reported as a MarkLostError and left alone, never adopted nor
// deleted; the operator deletes it (`nft delete table ...`) or renames
// netagent's. An entry whose table is gone (a crash between the record and
// the create, `nft flush ruleset`) is dropped at the next write of the
// record.

// recordFileName is the record's file in the state directory.
const recordFileName = "nftables.json"

// maxRecorded bounds the tables read from one namespace's entry.
const maxRecorded = 4096

// recordFile is the file: one entry per namespace instance.
type recordFile struct {
	Namespaces []nsTables `json:"namespaces"`
}

// nsTables is one namespace instance's tables.
type nsTables struct {
	statefile.NsIdentity
	Tables []MadeTable `json:"tables"`
}

// MadeTable is a table netagent made: its family, name and when.
type MadeTable struct {
	Family string    `json:"family"`
	Name   string    `json:"name"`
	Made   time.Time `json:"made"`
}

// ID is "<family>/<name>".
func (m MadeTable) ID() string { return m.Family + "/" + m.Name }

// valid reports whether the entry read from disk names a table at all
// (the file is not trusted: a known family, a name nft allows).
func (m MadeTable) valid() bool {
	_, ok := families[m.Family]
	return ok && m.Name != "" && len(m.Name) < 256
}

// records is one namespace's entry of the record; nil (no state
// directory) records nothing and knows nothing.
type records struct {
	path string
	ns   statefile.NsIdentity
	now  func() time.Time
}

// newRecords returns t's records in stateDir, nil for "".
func newRecords(t *netnsx.Target, stateDir string) (*records, error) {
	if stateDir == "" {
		return nil, nil
	}
	ns, err := statefile.Identify(t)
	if err != nil {
		return nil, fmt.Errorf("nftables records: %w", err)
	}
	return &records{path: filepath.Join(stateDir, recordFileName), ns: ns, now: time.Now}, nil
}

// Recorded returns the tables the state directory records as made by
// netagent in namespace t, by ID (none without a state directory).
func Recorded(t *netnsx.Target, stateDir string) (map[string]MadeTable, error) {
	r, err := newRecords(t, stateDir)
	if err != nil {
		return nil, err
	}
	return r.get()
}

// get returns the namespace's valid entries by ID.
func (r *records) get() (map[string]MadeTable, error) {
	out := map[string]MadeTable{}
	if r == nil {
		return out, nil
	}
	var f recordFile
	if _, err := statefile.LoadJSON(r.path, &f); err != nil {
		return nil, fmt.Errorf("nftables records: %w", err)
	}
	for _, e := range f.Namespaces {
		if e.NsIdentity != r.ns {
			continue
		}
		for _, m := range e.Tables[:min(len(e.Tables), maxRecorded)] {
			if m.valid() {
				out[m.ID()] = m
			}
		}
	}
	return out, nil
}

// add records the table family/name as made now (unless it is recorded
// and not gone: it keeps its time), and forgets the entries of gone (the
// IDs of tables that no longer exist).
func (r *records) add(family, name string, gone []string) error {
	m := MadeTable{Family: family, Name: name, Made: r.now().UTC()}
	return r.update(func(ts []MadeTable) []MadeTable {
		if i := slices.IndexFunc(ts, func(e MadeTable) bool { return e.ID() == m.ID() }); i >= 0 && !slices.Contains(gone, m.ID()) {
			m.Made = ts[i].Made
		}
		ts = slices.DeleteFunc(ts, func(e MadeTable) bool { return e.ID() == m.ID() || slices.Contains(gone, e.ID()) })
		return append(ts, m)
	})
}

// remove forgets the tables of ids.
func (r *records) remove(ids ...string) error {
	return r.update(func(ts []MadeTable) []MadeTable {
		return slices.DeleteFunc(ts, func(e MadeTable) bool { return slices.Contains(ids, e.ID()) })
	})
}

// update replaces the namespace's entries with f's, under the file's
// lock, and drops the entries of other boots and invalid ones.
func (r *records) update(f func([]MadeTable) []MadeTable) error {
	if r == nil {
		return nil
	}
	err := statefile.UpdateJSON(r.path, func(file *recordFile) bool {
		var kept []nsTables
		var mine []MadeTable
		for _, e := range file.Namespaces {
			switch {
			case e.NsIdentity == r.ns:
				mine = append(mine, e.Tables...)
			case e.BootID == r.ns.BootID && len(e.Tables) > 0:
				kept = append(kept, e)
			}
		}
		mine = slices.DeleteFunc(f(slices.DeleteFunc(mine, func(m MadeTable) bool { return !m.valid() })), func(m MadeTable) bool { return !m.valid() })
		if len(mine) > 0 {
			kept = append(kept, nsTables{NsIdentity: r.ns, Tables: mine})
		}
		file.Namespaces = kept
		return true
	})
	if err != nil {
		return fmt.Errorf("nftables records: %w", err)
	}
	return nil
}

func init() {
	statefile.Register(recordFileName, "the nftables tables netagent made in each namespace and when: "+
		"a recorded table found without netagent's mark chain is reported and left alone, never adopted nor deleted")
}
