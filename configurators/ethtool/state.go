package ethtool

import (
	"fmt"
	"path/filepath"

	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
)

// stateFileName is the record of the ethtool settings as found.
const stateFileName = "ethtool.json"

func init() {
	statefile.Register(stateFileName, "the ethtool settings NICs had before netagent changed them, restored when they leave the intent")
}

// stateRecord is <stateDir>/ethtool.json: per namespace instance, by
// link name, each setting as it was before netagent first changed it.
type stateRecord struct {
	Namespaces []nsState `json:"namespaces"`
}

type nsState struct {
	statefile.NsIdentity
	Originals map[string]*found `json:"originals"`
}

// found is what one link held. Index tells the NIC apart from a new one
// of the same name, whose settings start from the driver's.
type found struct {
	Index    int                 `json:"index"`
	Settings map[string]uint32   `json:"settings"`
	Sets     map[string][]string `json:"sets,omitempty"`
}

// newFound is an empty record of the link of that index.
func newFound(index int) *found {
	return &found{Index: index, Settings: map[string]uint32{}, Sets: map[string][]string{}}
}

// store reads and updates one namespace's entry, durably and under the
// process-wide lock of the file (statefile). A damaged record fails
// every call, naming the file: it is never read as empty, which would
// take netagent's own values for the originals. A nil store (no state
// directory: read-back for show) records nothing and knows nothing.
type store struct {
	path string
	ns   statefile.NsIdentity
}

func newStore(stateDir string, ns statefile.NsIdentity) *store {
	if stateDir == "" {
		return nil
	}
	return &store{path: filepath.Join(stateDir, stateFileName), ns: ns}
}

// all returns the namespace's records by link name.
func (s *store) all() (map[string]*found, error) {
	if s == nil {
		return nil, nil
	}
	defer statefile.Lock(s.path)()
	var rec stateRecord
	if _, err := statefile.LoadJSON(s.path, &rec); err != nil {
		return nil, fmt.Errorf("ethtool state: %w", err)
	}
	all := rec.entry(s.ns).Originals
	if err := checkOriginals(all); err != nil {
		return nil, fmt.Errorf("ethtool state %s: %w", s.path, err)
	}
	return all, nil
}

// checkOriginals refuses a record no apply could have written (the
// state directory is not trusted): each entry must name a link and hold
// only known settings with values in their ranges, as the intent's.
func checkOriginals(all map[string]*found) error {
	for name, f := range all {
		if f == nil || f.Index <= 0 {
			return fmt.Errorf("%w: the entry of %q has no ifindex", statefile.ErrDamaged, name)
		}
		if err := (&items.Ethtool{Interface: name, Settings: f.Settings, Sets: f.Sets}).Validate(); err != nil {
			return fmt.Errorf("%w: %v", statefile.ErrDamaged, err)
		}
	}
	return nil
}

// originals returns what was recorded for the link of that index (an
// empty record when nothing is).
func (s *store) originals(name string, index int) (*found, error) {
	all, err := s.all()
	if err != nil {
		return nil, err
	}
	if f := all[name]; f != nil && f.Index == index {
		return f.filled(), nil
	}
	return newFound(index), nil
}

// filled is f with its maps made.
func (f *found) filled() *found {
	if f.Settings == nil {
		f.Settings = map[string]uint32{}
	}
	if f.Sets == nil {
		f.Sets = map[string][]string{}
	}
	return f
}

// update changes the link's settings record with f and writes the file
// when f reports a change. A record of another index is dropped first.
func (s *store) update(name string, index int, f func(*found) bool) error {
	if s == nil {
		return nil
	}
	return statefile.UpdateJSON(s.path, func(rec *stateRecord) bool {
		e := rec.entry(s.ns)
		cur := e.Originals[name]
		if cur == nil || cur.Index != index {
			cur = newFound(index)
		}
		if !f(cur.filled()) {
			return false
		}
		e.Originals[name] = cur
		if len(cur.Settings)+len(cur.Sets) == 0 {
			delete(e.Originals, name)
		}
		rec.prune(s.ns.BootID)
		return true
	})
}

// entry returns the namespace's entry, added when missing.
func (r *stateRecord) entry(ns statefile.NsIdentity) *nsState {
	for i := range r.Namespaces {
		if r.Namespaces[i].NsIdentity == ns {
			if r.Namespaces[i].Originals == nil {
				r.Namespaces[i].Originals = map[string]*found{}
			}
			return &r.Namespaces[i]
		}
	}
	r.Namespaces = append(r.Namespaces, nsState{NsIdentity: ns, Originals: map[string]*found{}})
	return &r.Namespaces[len(r.Namespaces)-1]
}

// prune drops the entries of earlier boots and the empty ones.
func (r *stateRecord) prune(bootID string) {
	kept := r.Namespaces[:0]
	for _, e := range r.Namespaces {
		if e.BootID == bootID && len(e.Originals) > 0 {
			kept = append(kept, e)
		}
	}
	r.Namespaces = kept
}
