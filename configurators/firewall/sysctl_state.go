package firewall

import (
	"fmt"
	"maps"
	"path/filepath"

	"github.com/netagent/netagent/internal/statefile"
)

// sysctlStateFile is the state record's name under the state directory.
const sysctlStateFile = "sysctl.json"

// sysctlFile is the JSON state record: per namespace instance, the value
// each parameter had before netagent first set it.
type sysctlFile struct {
	Namespaces []sysctlNS `json:"namespaces"`
}

type sysctlNS struct {
	statefile.NsIdentity
	Originals map[string]string `json:"originals"`
}

// sysctlStore reads and updates one namespace's entry in the state record.
// Every access re-reads the file under a process-wide lock, because the
// configurators of all namespaces (and a restarted agent) share it.
type sysctlStore struct {
	path string
	ns   statefile.NsIdentity
}

func newSysctlStore(stateDir string, ns statefile.NsIdentity) *sysctlStore {
	return &sysctlStore{path: filepath.Join(stateDir, sysctlStateFile), ns: ns}
}

// originals returns the saved originals of the namespace: its owned keys.
func (s *sysctlStore) originals() (map[string]string, error) {
	defer statefile.Lock(s.path)()
	f, err := s.load()
	if err != nil {
		return nil, err
	}
	if e := f.entry(s.ns); e != nil {
		return maps.Clone(e.Originals), nil
	}
	return map[string]string{}, nil
}

// remember saves value as key's original unless one is saved already.
func (s *sysctlStore) remember(key, value string) error {
	return s.update(func(orig map[string]string) bool {
		if _, ok := orig[key]; ok {
			return false
		}
		orig[key] = value
		return true
	})
}

// forget drops key's original.
func (s *sysctlStore) forget(key string) error {
	return s.update(func(orig map[string]string) bool {
		_, ok := orig[key]
		delete(orig, key)
		return ok
	})
}

// update changes the namespace's originals with f and writes the record
// back if f reports a change. Entries of earlier boots are dropped then:
// their namespaces are gone.
func (s *sysctlStore) update(f func(map[string]string) bool) error {
	defer statefile.Lock(s.path)()
	file, err := s.load()
	if err != nil {
		return err
	}
	e := file.entry(s.ns)
	if e == nil {
		file.Namespaces = append(file.Namespaces, sysctlNS{NsIdentity: s.ns, Originals: map[string]string{}})
		e = &file.Namespaces[len(file.Namespaces)-1]
	}
	if !f(e.Originals) {
		return nil
	}
	file.prune(s.ns.BootID)
	if err := statefile.SaveJSON(s.path, file); err != nil {
		return fmt.Errorf("writing %s: %w", s.path, err)
	}
	return nil
}

// load reads the record (statefile.LoadJSON); a missing file is an empty
// record, a damaged or refused one an error: the originals it held are
// not guessed.
func (s *sysctlStore) load() (*sysctlFile, error) {
	var f sysctlFile
	if _, err := statefile.LoadJSON(s.path, &f); err != nil {
		return nil, fmt.Errorf("sysctl originals: %w", err)
	}
	return &f, nil
}

// entry returns the namespace's entry, or nil.
func (f *sysctlFile) entry(ns statefile.NsIdentity) *sysctlNS {
	for i := range f.Namespaces {
		if f.Namespaces[i].NsIdentity == ns {
			if f.Namespaces[i].Originals == nil {
				f.Namespaces[i].Originals = map[string]string{}
			}
			return &f.Namespaces[i]
		}
	}
	return nil
}

// prune drops the entries of other boots and the empty ones.
func (f *sysctlFile) prune(bootID string) {
	kept := f.Namespaces[:0]
	for _, e := range f.Namespaces {
		if e.BootID == bootID && len(e.Originals) > 0 {
			kept = append(kept, e)
		}
	}
	f.Namespaces = kept
}

func init() {
	statefile.Register(sysctlStateFile, "the value each sysctl had before netagent first set it, restored when it leaves the intent")
}
