package nftables

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	gnft "github.com/google/nftables"
	"github.com/google/nftables/expr"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// What a snapshot (agent/snapshot) holds of nf_tables, and the fake a
// plan against it runs over. A snapshot holds exactly what the
// configurator, the ownership records, plan's clashes and plan's
// warnings read of the kernel: netagent's tables decoded as the
// configurator decodes them (items.NftTable), and of every other table
// its family and name and, of its base chains, what tableReader reads
// (hook, type, priority, device, policy, and which of the first
// MaxInspectedRules rules drop or reject). Other owners' rules are never
// decoded past their verdicts, as everywhere else in this package.

// Bounds of a State: tables, base chains of one table, rules of one chain.
const (
	MaxStateTables = 4096
	MaxStateChains = 4096
	MaxStateRules  = 1 << 24
)

// State is nf_tables in a namespace, as a snapshot holds it: its JSON is
// the snapshot document's "nftables" section.
type State struct {
	// Unavailable: the kernel has no nf_tables (ErrNoNftables).
	Unavailable bool `json:"unavailable,omitempty"`
	// Tables are in the kernel's order.
	Tables []TableState `json:"tables"`
}

// TableState is one table: netagent's (Owned: it carries the mark), or
// another owner's (BaseChains).
type TableState struct {
	Family     string          `json:"family"`
	Name       string          `json:"name"`
	Owned      *items.NftTable `json:"owned,omitempty"`
	BaseChains []ForeignChain  `json:"baseChains,omitempty"`
}

// ID is "<family>/<name>".
func (t TableState) ID() string { return t.Family + "/" + t.Name }

// ForeignChain is a base chain of another owner's table as tableReader
// reads it: Rules is how many rules it has (not read, 0, when its policy
// is drop), Drops the indexes of those among its first
// MaxInspectedRules that drop or reject.
type ForeignChain struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Hook       string `json:"hook"` // "" for a hook number netagent does not know
	Priority   int    `json:"priority"`
	Device     string `json:"device,omitempty"`
	PolicyDrop bool   `json:"policyDrop,omitempty"`
	Rules      int    `json:"rules,omitempty"`
	Drops      []int  `json:"drops,omitempty"`
}

// DumpState reads nf_tables in namespace t as a snapshot holds it. It
// writes nothing (no dump is kept in a state directory).
func DumpState(t *netnsx.Target) (*State, error) {
	r := readerOf(t)
	c, ts, chains, err := r.tablesAndChains()
	if errors.Is(err, ErrNoNftables) {
		return &State{Unavailable: true}, nil
	}
	if err != nil {
		return nil, err
	}
	k := kernelOf(t)
	s := &State{Tables: []TableState{}}
	for _, ti := range ts {
		st := TableState{Family: ti.Family, Name: ti.Name}
		if ti.Marked {
			d, ok, err := k.DumpTable(ti.Family, ti.Name)
			if err != nil {
				return nil, err
			}
			if !ok || !d.Owned {
				continue // deleted, or its mark, meanwhile
			}
			tab := d.Table
			st.Owned = &tab
		} else if st.BaseChains, err = foreignChains(c, ti, chains); err != nil {
			return nil, err
		}
		s.Tables = append(s.Tables, st)
	}
	return s, nil
}

// foreignChains reads the base chains of ti among chains.
func foreignChains(c *gnft.Conn, ti TableInfo, chains []*gnft.Chain) ([]ForeignChain, error) {
	var out []ForeignChain
	for _, ch := range chains {
		if ch.Hooknum == nil || ch.Table.Name != ti.Name || familyName(ch.Table.Family) != ti.Family {
			continue
		}
		bc := baseChainOf(ti, ch)
		fc := ForeignChain{Name: bc.Chain, Type: bc.Type, Hook: bc.Hook, Priority: bc.Priority, Device: bc.Device, PolicyDrop: bc.PolicyDrop}
		if !bc.PolicyDrop {
			rules, err := c.GetRules(ch.Table, ch)
			if err != nil {
				return nil, fmt.Errorf("nftables: rules of %s: %w", bc.ID(), kernelErr(err))
			}
			fc.Rules = len(rules)
			for i, r := range rules[:min(len(rules), MaxInspectedRules)] {
				if drops(r.Exprs) {
					fc.Drops = append(fc.Drops, i)
				}
			}
		}
		out = append(out, fc)
	}
	return out, nil
}

// StateError is a State's field that is wrong, by its path in the JSON
// ("tables[2].baseChains[0].hook").
type StateError struct {
	Path string
	Err  error
}

func (e *StateError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *StateError) Unwrap() error { return e.Err }

func stateErr(path, format string, args ...any) error {
	return &StateError{Path: path, Err: fmt.Errorf(format, args...)}
}

// Check checks s, read from an untrusted document: bounds, known
// families, hooks and types, each table once, netagent's tables valid
// (items.NftTable.Validate; Load checks the rest as the kernel would),
// drop indexes in order and in range.
func (s *State) Check() error {
	if len(s.Tables) > MaxStateTables {
		return stateErr("tables", "more than %d tables", MaxStateTables)
	}
	if s.Unavailable && len(s.Tables) > 0 {
		return stateErr("tables", "tables of a kernel without nf_tables")
	}
	seen := map[string]bool{}
	for i, t := range s.Tables {
		p := fmt.Sprintf("tables[%d]", i)
		if err := t.check(p); err != nil {
			return err
		}
		if seen[t.ID()] {
			return stateErr(p, "table %s is twice", t.ID())
		}
		seen[t.ID()] = true
	}
	return nil
}

func (t *TableState) check(p string) error {
	if _, ok := families[t.Family]; !ok {
		return stateErr(p+".family", "%q is not a family (inet, ip, ip6, bridge, netdev)", t.Family)
	}
	if t.Name == "" || len(t.Name) > 255 {
		return stateErr(p+".name", "not a table name")
	}
	if t.Owned == nil {
		return t.checkForeign(p)
	}
	if len(t.BaseChains) > 0 {
		return stateErr(p+".baseChains", "netagent's table has its chains in owned")
	}
	if t.Owned.Family != t.Family || t.Owned.Table != t.Name {
		return stateErr(p+".owned", "is table %s, not %s", t.Owned.Name(), t.ID())
	}
	if err := t.Owned.Validate(); err != nil {
		return stateErr(p+".owned", "%v", err)
	}
	return nil
}

// nftTypes are the chain types of the kernel.
var nftTypes = map[string]bool{"filter": true, "nat": true, "route": true}

func (t *TableState) checkForeign(p string) error {
	if len(t.BaseChains) > MaxStateChains {
		return stateErr(p+".baseChains", "more than %d chains", MaxStateChains)
	}
	names := map[string]bool{}
	for j, c := range t.BaseChains {
		cp := fmt.Sprintf("%s.baseChains[%d]", p, j)
		_, hook := hooksOf(t.Family)[c.Hook]
		switch {
		case c.Name == "" || len(c.Name) > 255 || c.Name == items.NftOwnerChain || names[c.Name]:
			return stateErr(cp+".name", "not a chain name, netagent's mark, or twice")
		case c.Hook != "" && !hook:
			return stateErr(cp+".hook", "%q is not a hook of family %s", c.Hook, t.Family)
		case !nftTypes[c.Type]:
			return stateErr(cp+".type", "%q is not a chain type (filter, nat, route)", c.Type)
		case c.Priority < -1<<31 || c.Priority >= 1<<31:
			return stateErr(cp+".priority", "%d is out of range", c.Priority)
		case len(c.Device) > 15:
			return stateErr(cp+".device", "not a link name")
		case c.Rules < 0 || c.Rules > MaxStateRules || c.PolicyDrop && (c.Rules != 0 || len(c.Drops) > 0):
			return stateErr(cp+".rules", "%d rules (at most %d; none read with policy drop)", c.Rules, MaxStateRules)
		}
		for k, d := range c.Drops {
			if d < 0 || d >= min(c.Rules, MaxInspectedRules) || k > 0 && d <= c.Drops[k-1] {
				return stateErr(fmt.Sprintf("%s.drops[%d]", cp, k), "%d is not the index of a later inspected rule", d)
			}
		}
		names[c.Name] = true
	}
	return nil
}

// fakeIdentity is the fake namespace's identity in the state files when
// the fake has none (link's fake has the same).
var fakeIdentity = statefile.NsIdentity{BootID: "fake-boot", Netns: "fake", NsID: "NS(0:1)"}

func (f *FakeKernel) identity() statefile.NsIdentity {
	if f.Identity != nil {
		return *f.Identity
	}
	return fakeIdentity
}

// records are f's records in stateDir (nil for "").
func (f *FakeKernel) records(stateDir string) *records {
	if stateDir == "" {
		return nil
	}
	return &records{path: filepath.Join(stateDir, recordFileName), ns: f.identity(), now: time.Now}
}

// Load makes s's tables in f, which holds none, in their order, in one
// commit: netagent's as the configurator makes them (its mark first),
// another owner's with its base chains and, for each, the first of its
// rules as rules that drop where s says (their verdicts are all a
// snapshot knows of them). s is a checked State; a table the kernel
// would refuse is an error naming it.
func (f *FakeKernel) Load(s *State) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.tables) > 0 {
		return errors.New("nftables: loading a state into a fake that holds tables")
	}
	f.unavailable = s.Unavailable
	w := f.clone()
	counts := map[[3]string]int{}
	for i, ts := range s.Tables {
		if ts.Owned != nil {
			if err := w.createTable(w.table(ts.Family, ts.Name), *ts.Owned); err != nil {
				return &StateError{Path: fmt.Sprintf("tables[%d].owned", i), Err: fmt.Errorf("table %s: %w", ts.ID(), err)}
			}
			continue
		}
		t := &fakeTable{family: ts.Family, name: ts.Name}
		for _, c := range ts.BaseChains {
			t.chains = append(t.chains, foreignChain(t, c))
			counts[[3]string{ts.Family, ts.Name, c.Name}] = c.Rules
		}
		w.tables = append(w.tables, t)
	}
	f.foreignRules = counts
	f.commit(w)
	return nil
}

// foreignChain is c in the fake's table t.
func foreignChain(t *fakeTable, c ForeignChain) *fakeChain {
	policy := "accept"
	if c.PolicyDrop {
		policy = "drop"
	}
	// A chain whose hook netagent does not know keeps a hook of its own,
	// so that it stays a base chain that BaseChains shows without one.
	hook := c.Hook
	if hook == "" {
		hook = unknownHook
	}
	fc := &fakeChain{def: items.NftChain{Name: c.Name, Type: c.Type, Hook: hook, Priority: &items.NftPriority{Value: c.Priority}, Policy: policy, Device: c.Device}}
	for i := range min(c.Rules, MaxInspectedRules) {
		t.next++
		r := fakeRule{handle: t.next}
		if _, ok := slices.BinarySearch(c.Drops, i); ok {
			r.exprs = []expr.Any{&expr.Verdict{Kind: expr.VerdictDrop}}
		}
		fc.rules = append(fc.rules, r)
	}
	return fc
}

// unknownHook marks a loaded chain on a hook number netagent has no name for.
const unknownHook = "\x00unknown"

var _ tableReader = (*FakeKernel)(nil)

// Tables lists every table with its mark, as the kernel's listing does.
func (f *FakeKernel) Tables() ([]TableInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unavailable {
		return nil, fmt.Errorf("nftables: listing tables: %w", ErrNoNftables)
	}
	out := make([]TableInfo, 0, len(f.tables))
	for _, t := range f.tables {
		out = append(out, TableInfo{Family: t.family, Name: t.name, Marked: t.chain(items.NftOwnerChain) != nil})
	}
	return out, nil
}

// BaseChains returns the base chains keep keeps, with their rules'
// drops counted within ruleBudget, as the kernel's reader does
// (netlinkReader.BaseChains).
func (f *FakeKernel) BaseChains(keep func(TableInfo, BaseChain) bool, ruleBudget int) ([]BaseChain, error) {
	ts, err := f.Tables()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []BaseChain
	for i, t := range f.tables {
		for _, c := range t.chains {
			if !c.def.Base() {
				continue
			}
			bc := f.baseChain(t, c)
			if !keep(ts[i], bc) {
				continue
			}
			read := false
			inspectRules(&bc, &ruleBudget, func() ([]*gnft.Rule, error) { read = true; return f.rules(c), nil })
			if total, ok := f.foreignRules[[3]string{t.family, t.name, c.def.Name}]; ok && read {
				bc.Rules = total // a loaded chain holds its first rules only
			}
			out = append(out, bc)
		}
	}
	return out, nil
}

func (f *FakeKernel) baseChain(t *fakeTable, c *fakeChain) BaseChain {
	bc := BaseChain{Family: t.family, Table: t.name, Chain: c.def.Name, Type: c.def.Type, Hook: c.def.Hook, Device: c.def.Device, PolicyDrop: c.def.Policy == "drop"}
	if bc.Hook == unknownHook {
		bc.Hook = ""
	}
	if c.def.Priority != nil {
		bc.Priority = c.def.Priority.Value
	}
	return bc
}

// rules are the fake's rules of c.
func (f *FakeKernel) rules(c *fakeChain) []*gnft.Rule {
	rules := make([]*gnft.Rule, len(c.rules))
	for i, r := range c.rules {
		rules[i] = &gnft.Rule{Exprs: r.exprs}
	}
	return rules
}

// RegisterFakeIn registers the nft-table configurator over f as
// RegisterWith does over a namespace: with the ownership records in
// stateDir ("": none) under f's Identity.
func RegisterFakeIn(reg *reconciler.TypeRegistry, f *FakeKernel, stateDir string) error {
	return reg.Register(items.TypeNftTable, wrap(&configurator{k: f}, f, f.records(stateDir)))
}

// Clashes is Clashes over f, with the records in stateDir.
func (f *FakeKernel) Clashes(stateDir string, hint *dg.Graph) (map[dg.ItemRef]error, error) {
	want := intendedTables(hint)
	if len(want) == 0 {
		return nil, nil
	}
	return clashes(f, f.records(stateDir), want)
}

// Warnings is Warnings over f.
func (f *FakeKernel) Warnings(hint *dg.Graph) ([]Warning, error) {
	want := intendedTables(hint)
	if len(want) == 0 {
		return nil, nil
	}
	return warnings(f, want, MaxInspectedRules)
}
