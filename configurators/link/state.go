package link

import (
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
)

// stateFileName is the link record's name under the state directory.
const stateFileName = "links.json"

// stateRecord is <stateDir>/links.json: per namespace instance, the
// settings of physical links as found before netagent first changed them,
// and the create journal.
type stateRecord struct {
	Namespaces []nsState `json:"namespaces"`
}

type nsState struct {
	statefile.NsIdentity
	// Originals holds, by link name, each setting of a physical link as it
	// was before netagent first changed it.
	Originals map[string]*original `json:"originals,omitempty"`
	// Creating is the create journal: by name, the links netagent is about
	// to create and has not marked yet.
	Creating map[string]journalEntry `json:"creating,omitempty"`
	// Wireguard holds, by link name, the key files of the WireGuard
	// devices netagent configured (kind_wireguard.go).
	Wireguard map[string]wgKeyFiles `json:"wireguard,omitempty"`
}

// original is what a physical link held before netagent changed it; nil
// fields were never changed by netagent. Index tells the NIC apart from a
// new one of the same name (hot-plugged again), whose settings start from
// the kernel's.
type original struct {
	Index int `json:"index"`
	// Marked: the link was found carrying netagent's mark. Its record is
	// kept, empty, after its settings are given back, so that it is never
	// taken for a link netagent owns.
	Marked bool    `json:"marked,omitempty"`
	MTU    *int    `json:"mtu,omitempty"`
	Up     *bool   `json:"up,omitempty"`
	Alias  *string `json:"alias,omitempty"`
	MAC    *string `json:"mac,omitempty"`
	// Name is the NIC's kernel name before netagent renamed it to the
	// name of the interface that matched it (the record's key).
	Name *string `json:"name,omitempty"`
	// Match is the match that found the NIC (not a setting: what a
	// read-back without the intent, `show`, says of it).
	Match *matchRecord `json:"match,omitempty"`
}

// matchRecord is an items.NICMatch as the state file keeps it, the MACs
// written out.
type matchRecord struct {
	PermanentMAC string `json:"permanentMac,omitempty"`
	MAC          string `json:"mac,omitempty"`
	Driver       string `json:"driver,omitempty"`
	Path         string `json:"path,omitempty"`
	Name         string `json:"name,omitempty"`
}

// recordMatch is m as the state file keeps it (nil for nil).
func recordMatch(m *items.NICMatch) *matchRecord {
	if m == nil {
		return nil
	}
	return &matchRecord{PermanentMAC: macString(m.PermanentMAC), MAC: macString(m.MAC), Driver: m.Driver, Path: m.Path, Name: m.Name}
}

// item is the match the record holds (nil for nil, or for a MAC that
// does not parse: the record is not trusted).
func (r *matchRecord) item() *items.NICMatch {
	if r == nil {
		return nil
	}
	m := &items.NICMatch{Driver: r.Driver, Path: r.Path, Name: r.Name}
	var err1, err2 error
	if r.PermanentMAC != "" {
		m.PermanentMAC, err1 = net.ParseMAC(r.PermanentMAC)
	}
	if r.MAC != "" {
		m.MAC, err2 = net.ParseMAC(r.MAC)
	}
	if err1 != nil || err2 != nil {
		return nil
	}
	return m
}

// macString is mac's text, "" for none.
func macString(mac net.HardwareAddr) string {
	if len(mac) == 0 {
		return ""
	}
	return mac.String()
}

func (o *original) empty() bool {
	return o.MTU == nil && o.Up == nil && o.Alias == nil && o.MAC == nil && o.Name == nil && o.Match == nil
}

// journalEntry is a link about to be created: its kind, and a veth's peer
// when it is created in the same namespace (it is marked with it).
type journalEntry struct {
	Kind items.InterfaceKind `json:"kind"`
	Peer string              `json:"peer,omitempty"`
}

// stateStore reads and updates one namespace's entry of the link record.
// Every update re-reads the file under a process-wide lock and replaces it
// durably (statefile.SaveJSON: the new file and the directory synced)
// before returning, so what it records survives the agent's crash or kill
// that follows, and a power cut finds either the old record or the new
// one, never an empty or torn one. What the record holds is about this
// boot (entries are keyed by boot ID and pruned at the next one), but a
// torn record is damaged, and a damaged one stops apply and the daemon's
// start until `netagent recover --accept-damaged`: an outage netagent
// would make after every power failure. The create journal costs two
// durable writes per wave of creates (createAll: one entry for every link
// of the wave before the first add, one clear after), not per link.
//
// The file is a record (statefile.LoadJSON: a version and a checksum). One
// that is not whole (emptied, cut short, garbled) is never read as an
// empty record: the originals it held would be replaced by what the links
// hold now, netagent's own settings, and "restored" as such. Every read
// and update fails instead, naming the file, until `netagent recover
// --accept-damaged` sets it aside.
//
// A nil *stateStore (no state directory: read-back for `show`) records
// nothing and knows nothing.
type stateStore struct {
	path string
	ns   statefile.NsIdentity
}

// newStateStore returns the store of t in stateDir, nil for "".
func newStateStore(t *netnsx.Target, stateDir string) (*stateStore, error) {
	if stateDir == "" {
		return nil, nil
	}
	ns, err := statefile.Identify(t)
	if err != nil {
		return nil, fmt.Errorf("link state: %w", err)
	}
	return &stateStore{path: filepath.Join(stateDir, stateFileName), ns: ns}, nil
}

// snapshot returns a copy of the namespace's entry (empty when none).
func (s *stateStore) snapshot() (nsState, error) {
	if s == nil {
		return nsState{}, nil
	}
	defer statefile.Lock(s.path)()
	rec, err := s.load()
	if err != nil {
		return nsState{}, err
	}
	if e := rec.entry(s.ns); e != nil {
		return *e, nil
	}
	return nsState{}, nil
}

// update changes the namespace's entry with f and writes the record back
// if f reports a change. Entries of earlier boots, and empty ones, are
// dropped then: their namespaces are gone.
func (s *stateStore) update(f func(*nsState) bool) error {
	if s == nil {
		return nil
	}
	defer statefile.Lock(s.path)()
	rec, err := s.load()
	if err != nil {
		return err
	}
	e := rec.entry(s.ns)
	if e == nil {
		rec.Namespaces = append(rec.Namespaces, nsState{NsIdentity: s.ns})
		e = &rec.Namespaces[len(rec.Namespaces)-1]
	}
	if e.Originals == nil {
		e.Originals = map[string]*original{}
	}
	if e.Creating == nil {
		e.Creating = map[string]journalEntry{}
	}
	if !f(e) {
		return nil
	}
	rec.prune(s.ns.BootID)
	if err := statefile.SaveJSON(s.path, rec); err != nil {
		return fmt.Errorf("writing %s: %w", s.path, err)
	}
	return nil
}

func (s *stateStore) load() (*stateRecord, error) {
	var rec stateRecord
	if _, err := statefile.LoadJSON(s.path, &rec); err != nil {
		return nil, fmt.Errorf("link state: %w", err)
	}
	return &rec, nil
}

func (r *stateRecord) entry(ns statefile.NsIdentity) *nsState {
	for i := range r.Namespaces {
		if r.Namespaces[i].NsIdentity == ns {
			return &r.Namespaces[i]
		}
	}
	return nil
}

func (r *stateRecord) prune(bootID string) {
	kept := r.Namespaces[:0]
	for _, e := range r.Namespaces {
		if e.BootID == bootID && (len(e.Originals) > 0 || len(e.Creating) > 0 || len(e.Wireguard) > 0) {
			kept = append(kept, e)
		}
	}
	r.Namespaces = kept
}

// journal records that the link is about to be created, and drops the
// entries of stale (links that do not exist: an agent killed before their
// add left them, and no link of that name may be adopted by them later).
func (s *stateStore) journal(want *items.Interface, stale []string) error {
	return s.journalAll([]*items.Interface{want}, stale)
}

// journalAll records, in one write, that the links are about to be
// created, and drops the entries of stale (see journal) that it does not
// name again.
func (s *stateStore) journalAll(wants []*items.Interface, stale []string) error {
	err := s.update(func(e *nsState) bool {
		changed := false
		for _, name := range stale {
			if _, ok := e.Creating[name]; ok {
				delete(e.Creating, name)
				changed = true
			}
		}
		for _, want := range wants {
			entry := journalEntry{Kind: want.Kind, Peer: items.LocalPeer(want)}
			if e.Creating[want.IfName] != entry {
				e.Creating[want.IfName] = entry
				changed = true
			}
		}
		return changed
	})
	if err != nil {
		return fmt.Errorf("journaling the create of %s: %w", describe(wants), err)
	}
	return nil
}

// describe names the links of a journal write in its errors.
func describe(wants []*items.Interface) string {
	if len(wants) == 1 {
		return fmt.Sprintf("%s %s", wants[0].Kind, wants[0].IfName)
	}
	return fmt.Sprintf("%d links (%s %s, ...)", len(wants), wants[0].Kind, wants[0].IfName)
}

// unjournal clears, in one write, the journal entries of the named links,
// and of a veth whose peer one of them is: they are marked, or gone.
func (s *stateStore) unjournal(names ...string) error {
	if len(names) == 0 {
		return nil
	}
	clear := make(map[string]bool, len(names))
	for _, n := range names {
		clear[n] = true
	}
	err := s.update(func(e *nsState) bool {
		changed := false
		for n, entry := range e.Creating {
			if clear[n] || (entry.Kind == items.KindVeth && clear[entry.Peer]) {
				delete(e.Creating, n)
				changed = true
			}
		}
		return changed
	})
	if err != nil {
		return fmt.Errorf("clearing the create journal of %s: %w", strings.Join(names, ", "), err)
	}
	return nil
}

// rememberOriginals records, for each setting of the physical link l that
// changes says is about to change, the value l holds now, unless an
// original is recorded already (the first one is the original). A record
// of another link of that name (another ifindex) is replaced.
func (s *stateStore) rememberOriginals(l netlink.Link, changes settingSet) error {
	a := l.Attrs()
	err := s.update(func(e *nsState) bool {
		key, o := e.find(a, a.Name) // under another name: a rename under way
		if o == nil {
			key, o = a.Name, &original{Index: a.Index, Marked: ownedAlias(a.Alias)}
		}
		changed := e.Originals[key] != o // a new record
		set := func(have bool, field string) bool { return changes.has(field) && !have }
		if set(o.MTU != nil, "mtu") {
			o.MTU, changed = new(a.MTU), true
		}
		if set(o.Up != nil, "up") {
			o.Up, changed = new(a.Flags&net.FlagUp != 0), true
		}
		if set(o.Alias != nil, "alias") {
			o.Alias, changed = new(a.Alias), true
		}
		if set(o.MAC != nil, "mac") {
			o.MAC, changed = new(a.HardwareAddr.String()), true
		}
		if changed && (!o.empty() || o.Marked) {
			e.Originals[key] = o
			return true
		}
		return false
	})
	if err != nil {
		return fmt.Errorf("recording the original settings of %s: %w", a.Name, err)
	}
	return nil
}

// rememberName records, before netagent renames the physical link l to
// name, its name now as its original, unless one is recorded already,
// and the match m that found it; the link's record (its other originals)
// moves to the new name (or stays there: a NIC someone renamed back).
func (s *stateStore) rememberName(l netlink.Link, name string, m *items.NICMatch) error {
	return s.renameRecord(l, name, func(o *original) bool {
		changed := !o.Match.item().Equal(m)
		o.Match = recordMatch(m)
		return changed
	})
}

// moveRecord is rememberName for a rename that finds nothing (a NIC moved
// out of another's way, a name given back): the match recorded stays.
func (s *stateStore) moveRecord(l netlink.Link, name string) error {
	return s.renameRecord(l, name, nil)
}

// renameRecord moves the record of l to name, recording l's name now as
// its original if none is (and it is not a temporary name: swap.go), and
// changes it with set (nil: nothing; true: it changed).
func (s *stateStore) renameRecord(l netlink.Link, name string, set func(*original) bool) error {
	a := l.Attrs()
	err := s.update(func(e *nsState) bool {
		key, o := e.recordOf(a, name)
		changed := key != name
		if o.Name == nil && name != a.Name && !isTempName(a.Name) {
			o.Name, changed = new(a.Name), true
		}
		if set != nil && set(o) {
			changed = true
		}
		if key != "" {
			delete(e.Originals, key)
		}
		e.Originals[name] = o
		return changed
	})
	if err != nil {
		return fmt.Errorf("recording the original name of %s before renaming it %s: %w", a.Name, name, err)
	}
	return nil
}

// recordOf is the record of the link a and its key: under its name, or
// under name (a NIC someone renamed back, or whose rename was
// interrupted), or under any name with its ifindex (a NIC killed on its way
// out of another's); else a new one (key "").
func (e *nsState) recordOf(a *netlink.LinkAttrs, name string) (string, *original) {
	if key, o := e.find(a, name); o != nil {
		return key, o
	}
	return "", &original{Index: a.Index, Marked: ownedAlias(a.Alias)}
}

// find is the record of the link a and its key, as recordOf finds it
// (nil: none).
func (e *nsState) find(a *netlink.LinkAttrs, name string) (string, *original) {
	for _, key := range []string{a.Name, name} {
		if o := e.Originals[key]; o != nil && o.Index == a.Index {
			return key, o
		}
	}
	keys := slices.Sorted(maps.Keys(e.Originals))
	for _, key := range keys {
		if o := e.Originals[key]; o != nil && o.Index == a.Index {
			return key, o
		}
	}
	return "", nil
}

// forgetOriginals drops the recorded originals of the named link's
// settings in fields (all of them when fields is nil).
func (s *stateStore) forgetOriginals(name string, fields settingSet) error {
	err := s.update(func(e *nsState) bool {
		o := e.Originals[name]
		if o == nil {
			return false
		}
		if fields == nil {
			delete(e.Originals, name)
			return true
		}
		for _, f := range fields {
			switch f {
			case "mtu":
				o.MTU = nil
			case "up":
				o.Up = nil
			case "alias":
				o.Alias = nil
			case "mac":
				o.MAC = nil
			case "name":
				o.Name = nil
			case "match":
				o.Match = nil
			}
		}
		if o.empty() && !o.Marked {
			delete(e.Originals, name)
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("forgetting the original settings of %s: %w", name, err)
	}
	return nil
}

// settingSet names settings of a physical link: "mtu", "up", "alias",
// "mac", "name", and "match" (what found it, not a setting).
type settingSet []string

func (s settingSet) has(f string) bool { return slices.Contains(s, f) }

// originalOf returns the recorded originals of l (nil if none, or if they
// were recorded for another link of that name): under its name, or under
// another name with its ifindex (a rename killed between its record and
// the kernel's: the record moves first).
func (st nsState) originalOf(l netlink.Link) *original {
	_, o := st.find(l.Attrs(), l.Attrs().Name)
	return o
}

// journaled reports whether the create journal names l: an entry of its
// name and kind (and, for a veth, its peer), or l is the peer of a
// journaled veth.
func (st nsState) journaled(l netlink.Link, nameOf func(int) string) bool {
	a := l.Attrs()
	if e, ok := st.Creating[a.Name]; ok && kindOf(l) == e.Kind {
		return e.Kind != items.KindVeth || e.Peer == "" || (a.NetNsID < 0 && nameOf(a.ParentIndex) == e.Peer)
	}
	if kindOf(l) != items.KindVeth || a.NetNsID >= 0 {
		return false
	}
	peer := nameOf(a.ParentIndex)
	e, ok := st.Creating[peer]
	return ok && e.Kind == items.KindVeth && e.Peer == a.Name
}

func init() {
	statefile.Register(stateFileName, "the settings NICs had before netagent changed them, restored when they leave the intent; "+
		"the journal of links being created, adopted after a kill; the key files of WireGuard devices")
}
