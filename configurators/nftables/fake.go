package nftables

import (
	"bytes"
	"fmt"
	"slices"
	"sync"

	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// FakeKernel is nf_tables in memory, for tests of the configurator and of
// the packages above it (RegisterFake). It keeps what the kernel keeps
// and refuses what it refuses, with its errnos:
//
//   - tables in creation order, with chains, rules with handles (one
//     counter per table, as the kernel's), counters, and sets of elements;
//     rules are held as the codec's expressions and read back through it;
//   - a batch applies atomically: the first failing op leaves nothing of
//     the batch (EEXIST for a created table that exists, NLM_F_EXCL;
//     ENOENT for what is not there; EBUSY for a deleted chain some rule
//     jumps to or a deleted set some rule looks up; EEXIST for a base
//     chain's hook changed in place and for overlapping interval
//     elements);
//   - a ruleset generation bumped by every committed batch; a batch of a
//     generation that is not the current one fails with
//     ErrGenerationChanged;
//   - faults: FailBatch fails a given batch, BeforeBatch runs a foreign
//     writer between a caller's dump and its batch.
type FakeKernel struct {
	mu      sync.Mutex
	tables  []*fakeTable
	gen     uint32
	batches int
	fail    map[int]error
	before  []func()

	// Identity, if set, is the namespace's identity in the state files
	// (the ownership records of RegisterFakeIn, Clashes).
	Identity *statefile.NsIdentity
	// unavailable is a kernel without nf_tables (Load of such a State);
	// foreignRules the rule counts of loaded foreign chains (snapshot.go).
	unavailable  bool
	foreignRules map[[3]string]int
}

var _ kernel = (*FakeKernel)(nil)

type fakeTable struct {
	family, name string
	next         uint64 // the table's handle generator
	chains       []*fakeChain
	sets         []*fakeSet
	maps         []*fakeMap
}

type fakeChain struct {
	def   items.NftChain // without its rules; priority as a number, policy spelled out
	rules []fakeRule
}

type fakeRule struct {
	handle  uint64
	exprs   []expr.Any
	packets uint64 // its counter, when it has one
}

type fakeSet struct {
	def   items.NftSet // without its elements
	elems []items.NftElementRange
}

// NewFakeKernel returns an empty ruleset of generation 1.
func NewFakeKernel() *FakeKernel { return &FakeKernel{gen: 1, fail: map[int]error{}} }

// RegisterFake registers the nft-table configurator over f.
func RegisterFake(reg *reconciler.TypeRegistry, f *FakeKernel) error {
	return reg.Register(items.TypeNftTable, &configurator{k: f})
}

// ReadBack returns netagent's tables in f, as ReadBack does in a kernel.
func (f *FakeKernel) ReadBack() ([]dg.Item, error) { return readBack(f) }

// Gen returns the ruleset's generation.
func (f *FakeKernel) Gen() uint32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gen
}

// Batches returns how many batches were tried, failed ones included.
func (f *FakeKernel) Batches() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.batches
}

// FailBatch makes the n-th batch from now (1: the next) fail with err,
// changing nothing.
func (f *FakeKernel) FailBatch(n int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail[f.batches+n] = err
}

// BeforeBatch runs fn before the next batch is applied (after the
// caller's dump): another writer between read and write. fn may call f.
func (f *FakeKernel) BeforeBatch(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.before = append(f.before, fn)
}

// AddForeignTable makes a table that is not netagent's (no owner chain)
// with chains (their rules included), as another writer would, in one
// committed batch.
func (f *FakeKernel) AddForeignTable(family, name string, chains ...items.NftChain) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.clone()
	if w.table(family, name) != nil {
		return fmt.Errorf("table %s/%s: %w", family, name, unix.EEXIST)
	}
	t := &fakeTable{family: family, name: name}
	w.tables = append(w.tables, t)
	for _, ch := range chains {
		op := Op{Kind: OpAddChain, Table: items.NftTable{Family: family, Table: name}, Chain: ch}
		if err := w.apply(op); err != nil {
			return err
		}
		for _, r := range ch.Rules {
			op := Op{Kind: OpAddRule, Table: op.Table, Chain: ch, Rule: r}
			if err := w.apply(op); err != nil {
				return err
			}
		}
	}
	f.commit(w)
	return nil
}

// Traffic counts packets on every rule with a counter in the table.
func (f *FakeKernel) Traffic(family, table string, packets uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.table(family, table)
	if t == nil {
		return
	}
	for _, ch := range t.chains {
		for i := range ch.rules {
			if slices.ContainsFunc(ch.rules[i].exprs, func(e expr.Any) bool { _, ok := e.(*expr.Counter); return ok }) {
				ch.rules[i].packets += packets
			}
		}
	}
}

// Counter returns the packets counted by the rule of handle in chain,
// and false when there is no such rule.
func (f *FakeKernel) Counter(family, table, chain string, handle uint64) (uint64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ch := f.table(family, table).chain(chain); ch != nil {
		if i := ch.rule(handle); i >= 0 {
			return ch.rules[i].packets, true
		}
	}
	return 0, false
}

// ApplyBatch applies ops atomically, in generation gen when it is not 0.
func (f *FakeKernel) ApplyBatch(gen uint32, ops []Op) error {
	f.mu.Lock()
	if len(f.before) > 0 {
		fn := f.before[0]
		f.before = f.before[1:]
		f.mu.Unlock()
		fn()
		f.mu.Lock()
	}
	defer f.mu.Unlock()
	f.batches++
	if err, ok := f.fail[f.batches]; ok {
		return fmt.Errorf("nftables batch of %d operations: %w", len(ops), err)
	}
	if gen != 0 && gen != f.gen {
		return fmt.Errorf("nftables batch of %d operations: %w", len(ops), ErrGenerationChanged)
	}
	w := f.clone()
	for _, op := range ops {
		if err := w.apply(op); err != nil {
			return fmt.Errorf("nftables batch of %d operations: %s: %w", len(ops), op, err)
		}
	}
	f.commit(w)
	return nil
}

func (f *FakeKernel) commit(w *FakeKernel) {
	f.tables = w.tables
	f.gen++
}

// clone is a copy of f's tables that a batch may change.
func (f *FakeKernel) clone() *FakeKernel {
	w := &FakeKernel{}
	for _, t := range f.tables {
		c := *t
		c.chains, c.sets = nil, nil
		for _, ch := range t.chains {
			cc := *ch
			cc.rules = slices.Clone(ch.rules)
			c.chains = append(c.chains, &cc)
		}
		for _, s := range t.sets {
			cs := *s
			cs.elems = slices.Clone(s.elems)
			c.sets = append(c.sets, &cs)
		}
		c.maps = nil
		for _, m := range t.maps {
			cm := *m
			cm.elems = slices.Clone(m.elems)
			c.maps = append(c.maps, &cm)
		}
		w.tables = append(w.tables, &c)
	}
	return w
}

func (f *FakeKernel) table(family, name string) *fakeTable {
	for _, t := range f.tables {
		if t.family == family && t.name == name {
			return t
		}
	}
	return nil
}

func (t *fakeTable) chain(name string) *fakeChain {
	if t == nil {
		return nil
	}
	for _, c := range t.chains {
		if c.def.Name == name {
			return c
		}
	}
	return nil
}

func (t *fakeTable) set(name string) *fakeSet {
	for _, s := range t.sets {
		if s.def.Name == name {
			return s
		}
	}
	return nil
}

func (c *fakeChain) rule(handle uint64) int {
	return slices.IndexFunc(c.rules, func(r fakeRule) bool { return r.handle == handle })
}

// apply applies one op to the working copy w.
func (w *FakeKernel) apply(op Op) error {
	t := w.table(op.Table.Family, op.Table.Table)
	if op.Kind == OpCreateTable {
		return w.createTable(t, op.Table)
	}
	if t == nil {
		return fmt.Errorf("table %s: %w", op.Table.Name(), unix.ENOENT)
	}
	switch op.Kind {
	case OpDeleteTable:
		w.tables = slices.DeleteFunc(w.tables, func(x *fakeTable) bool { return x == t })
		return nil
	case OpAddChain:
		return t.addChain(op.Chain)
	case OpFlushChain, OpDeleteChain:
		return t.delChain(op.Chain.Name, op.Kind == OpDeleteChain)
	case OpAddSet:
		return t.addSet(op.Set)
	case OpDeleteSet:
		return t.delSet(op.Set.Name)
	case OpAddElements, OpDeleteElements:
		s := t.set(op.Set.Name)
		if s == nil {
			return fmt.Errorf("set %s: %w", op.Set.Name, unix.ENOENT)
		}
		return s.elements(op.Set.Elements, op.Kind == OpAddElements)
	case OpAddMap, OpDeleteMap, OpAddMapElements, OpDeleteMapElements:
		return t.mapOp(op)
	case OpAddRule:
		return t.addRule(op.Chain.Name, &op.Rule, op.Handle)
	case OpDeleteRule:
		c := t.chain(op.Chain.Name)
		if c == nil || c.rule(op.Handle) < 0 {
			return fmt.Errorf("rule %d of chain %s: %w", op.Handle, op.Chain.Name, unix.ENOENT)
		}
		c.rules = slices.Delete(c.rules, c.rule(op.Handle), c.rule(op.Handle)+1)
		return nil
	}
	return fmt.Errorf("op kind %d: %w", op.Kind, unix.EINVAL)
}

// createTable creates desc with NLM_F_EXCL, netagent's owner chain, its
// sets, chains and rules.
func (w *FakeKernel) createTable(t *fakeTable, desc items.NftTable) error {
	if t != nil {
		return fmt.Errorf("table %s: %w", desc.Name(), unix.EEXIST)
	}
	t = &fakeTable{family: desc.Family, name: desc.Table}
	w.tables = append(w.tables, t)
	if err := t.addChain(items.NftChain{Name: items.NftOwnerChain}); err != nil {
		return err
	}
	for _, s := range desc.Sets {
		if err := t.addSet(s); err != nil {
			return err
		}
	}
	for _, ch := range desc.Chains {
		if err := t.addChain(ch); err != nil {
			return err
		}
	}
	for _, m := range desc.Maps {
		if err := t.addMap(m); err != nil {
			return err
		}
	}
	for _, ch := range desc.Chains {
		for _, r := range ch.Rules {
			if err := t.addRule(ch.Name, &r, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// canonicalChain is ch as the kernel keeps it: no rules, a base chain's
// priority as a number and its policy spelled out.
func canonicalChain(family string, ch items.NftChain) (items.NftChain, error) {
	ch.Rules = nil
	if !ch.Base() {
		return ch, nil
	}
	if ch.Priority == nil || ch.Type == "" {
		return ch, fmt.Errorf("base chain %s without a type or priority: %w", ch.Name, unix.EINVAL)
	}
	if _, ok := hooksOf(family)[ch.Hook]; !ok {
		return ch, fmt.Errorf("chain %s: hook %s in family %s: %w", ch.Name, ch.Hook, family, unix.EOPNOTSUPP)
	}
	v, ok := items.NftPriorityValue(family, ch.Hook, *ch.Priority)
	if !ok {
		return ch, fmt.Errorf("chain %s: priority %s: %w", ch.Name, ch.Priority.Name, unix.EINVAL)
	}
	ch.Priority = &items.NftPriority{Value: v}
	if ch.Policy == "" {
		ch.Policy = "accept"
	}
	return ch, nil
}

func (t *fakeTable) addChain(ch items.NftChain) error {
	def, err := canonicalChain(t.family, ch)
	if err != nil {
		return err
	}
	old := t.chain(ch.Name)
	if old == nil {
		t.next++
		t.chains = append(t.chains, &fakeChain{def: def})
		return nil
	}
	if !sameHook(old.def, def) {
		return fmt.Errorf("chain %s: its hook, priority, type or device changed in place: %w", ch.Name, unix.EEXIST)
	}
	old.def.Policy = def.Policy
	return nil
}

// delChain flushes chain name's rules, and with del deletes it too.
func (t *fakeTable) delChain(name string, del bool) error {
	c := t.chain(name)
	if c == nil {
		return fmt.Errorf("chain %s: %w", name, unix.ENOENT)
	}
	c.rules = nil
	if !del {
		return nil
	}
	if t.uses(func(e expr.Any) bool { v, ok := e.(*expr.Verdict); return ok && v.Chain == name }) {
		return fmt.Errorf("chain %s: a rule jumps to it: %w", name, unix.EBUSY)
	}
	if t.mapJumpsTo(name) {
		return fmt.Errorf("chain %s: a map element jumps to it: %w", name, unix.EBUSY)
	}
	t.chains = slices.DeleteFunc(t.chains, func(x *fakeChain) bool { return x == c })
	return nil
}

// uses says whether an expression of some rule of t is one that is.
func (t *fakeTable) uses(is func(expr.Any) bool) bool {
	for _, c := range t.chains {
		for _, r := range c.rules {
			if slices.ContainsFunc(r.exprs, is) {
				return true
			}
		}
	}
	return false
}

func (t *fakeTable) addSet(s items.NftSet) error {
	if _, ok := setDatatypes[s.Type]; !ok {
		return fmt.Errorf("set %s: type %q: %w", s.Name, s.Type, unix.EINVAL)
	}
	def := s
	def.Elements = nil
	old := t.set(s.Name)
	if old != nil && !sameSet(old.def, def) {
		return fmt.Errorf("set %s: exists with another type or flags: %w", s.Name, unix.EEXIST)
	}
	if old == nil {
		t.next++
		old = &fakeSet{def: def}
		t.sets = append(t.sets, old)
	}
	return old.elements(s.Elements, true)
}

func (t *fakeTable) delSet(name string) error {
	s := t.set(name)
	if s == nil {
		return fmt.Errorf("set %s: %w", name, unix.ENOENT)
	}
	if t.uses(func(e expr.Any) bool { l, ok := e.(*expr.Lookup); return ok && l.SetName == name }) {
		return fmt.Errorf("set %s: a rule looks it up: %w", name, unix.EBUSY)
	}
	t.sets = slices.DeleteFunc(t.sets, func(x *fakeSet) bool { return x == s })
	return nil
}

// elements adds (add) or deletes elements: an added one equal to one
// there is no change, one overlapping another is EEXIST; a deleted one
// must be there.
func (s *fakeSet) elements(elems []string, add bool) error {
	for _, e := range elems {
		r, err := items.ParseNftElement(s.def.Type, s.def.Interval, e)
		if err != nil {
			return fmt.Errorf("set %s: %v: %w", s.def.Name, err, unix.EINVAL)
		}
		i := slices.IndexFunc(s.elems, func(x items.NftElementRange) bool {
			return bytes.Equal(x.Lo, r.Lo) && bytes.Equal(x.Hi, r.Hi)
		})
		switch {
		case !add && i < 0:
			return fmt.Errorf("set %s element %s: %w", s.def.Name, e, unix.ENOENT)
		case !add:
			s.elems = slices.Delete(s.elems, i, i+1)
		case i >= 0:
		case slices.ContainsFunc(s.elems, func(x items.NftElementRange) bool {
			return bytes.Compare(x.Lo, r.Hi) <= 0 && bytes.Compare(r.Lo, x.Hi) <= 0
		}):
			return fmt.Errorf("set %s element %s overlaps another: %w", s.def.Name, e, unix.EEXIST)
		default:
			s.elems = append(s.elems, r)
		}
	}
	return nil
}

// addRule adds r into chain, before the rule of handle before (0: at the
// end), as the codec encodes it: its lookups need sets of t, its jumps
// regular chains of t.
func (t *fakeTable) addRule(chain string, r *items.NftRule, before uint64) error {
	c := t.chain(chain)
	if c == nil {
		return fmt.Errorf("chain %s: %w", chain, unix.ENOENT)
	}
	exprs, err := encodeRule(t.family, r, t.types())
	if err != nil {
		return fmt.Errorf("chain %s: %v: %w", chain, err, unix.EINVAL)
	}
	for _, e := range exprs {
		if err := t.checkRef(e); err != nil {
			return fmt.Errorf("chain %s: %w", chain, err)
		}
	}
	at := len(c.rules)
	if before != 0 {
		if at = c.rule(before); at < 0 {
			return fmt.Errorf("chain %s: position handle %d: %w", chain, before, unix.ENOENT)
		}
	}
	t.next++
	c.rules = slices.Insert(c.rules, at, fakeRule{handle: t.next, exprs: exprs})
	return nil
}

// checkRef checks a lookup's set and a jump's chain.
func (t *fakeTable) checkRef(e expr.Any) error {
	switch e := e.(type) {
	case *expr.Lookup:
		if (t.set(e.SetName) == nil || e.IsDestRegSet) && (t.mapNamed(e.SetName) == nil || !e.IsDestRegSet) {
			return fmt.Errorf("set or map %s: %w", e.SetName, unix.ENOENT)
		}
	case *expr.Verdict:
		if e.Chain == "" {
			return nil
		}
		target := t.chain(e.Chain)
		if target == nil {
			return fmt.Errorf("jump to chain %s: %w", e.Chain, unix.ENOENT)
		}
		if target.def.Base() {
			return fmt.Errorf("jump to base chain %s: %w", e.Chain, unix.EOPNOTSUPP)
		}
	}
	return nil
}

// ListTables returns every table's family and name.
func (f *FakeKernel) ListTables() ([][2]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unavailable {
		return nil, fmt.Errorf("nftables: listing tables: %w", ErrNoNftables)
	}
	var out [][2]string
	for _, t := range f.tables {
		out = append(out, [2]string{t.family, t.name})
	}
	return out, nil
}

// DumpTable reads a table back as the kernel's dump does: its rules
// decoded from their expressions, with their handles.
func (f *FakeKernel) DumpTable(family, name string) (Dumped, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.table(family, name)
	out := Dumped{Table: items.NftTable{Family: family, Table: name}, Gen: f.gen, Handles: map[string][]uint64{}}
	if t == nil {
		return out, false, nil
	}
	out.Owned = t.chain(items.NftOwnerChain) != nil
	if !out.Owned {
		return out, true, nil
	}
	for _, s := range t.sets {
		ds := s.def
		elems := slices.Clone(s.elems)
		slices.SortFunc(elems, func(a, b items.NftElementRange) int { return bytes.Compare(a.Lo, b.Lo) })
		for _, e := range elems {
			ds.Elements = append(ds.Elements, items.NftElementString(s.def.Type, e))
		}
		out.Table.Sets = append(out.Table.Sets, ds)
	}
	out.Table.Maps = t.dumpMaps()
	for _, c := range t.chains {
		if c.def.Name == items.NftOwnerChain {
			continue
		}
		dc := c.def
		for i, r := range c.rules {
			dr, err := decodeRule(r.exprs)
			if err != nil {
				return Dumped{}, false, fmt.Errorf("nftables: table %s/%s: chain %s rule %d: %w", family, name, c.def.Name, i, err)
			}
			dc.Rules = append(dc.Rules, dr)
			out.Handles[c.def.Name] = append(out.Handles[c.def.Name], r.handle)
		}
		out.Table.Chains = append(out.Table.Chains, dc)
	}
	return out, true, nil
}
