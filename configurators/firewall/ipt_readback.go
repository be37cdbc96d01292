package firewall

import (
	"context"
	"fmt"
	"slices"
	"sync"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
)

// families are the address families, in read-back order.
var families = []items.Family{items.FamilyIPv4, items.FamilyIPv6}

// readBackChains returns the chains netagent owns (those starting with the
// marker rule), one iptables-save per family, the families' saves run at
// once. A family whose iptables programs are missing is skipped: netagent
// can neither read nor change its chains (MissingTools says so, for the
// caller to warn once).
func readBackChains(ctx context.Context, backends map[items.Family]backend, recs *recordStore,
	made *madeStore, hint *dg.Graph) ([]dg.Item, error) {
	saves := saveFamilies(ctx, backends)
	var out []dg.Item
	for i, fam := range families {
		s := saves[i]
		if s.err != nil {
			return nil, fmt.Errorf("reading back %v iptables chains: %w", fam, s.err)
		}
		for _, table := range sortedKeys(s.tables) {
			out = append(out, readBackTable(fam, table, s.tables[table], recs, made, hint)...)
		}
	}
	return out, nil
}

// familySave is one family's tables as saved for a read-back.
type familySave struct {
	tables map[string]*tableView
	err    error
}

// saveFamilies saves the tables of every family with programs, in
// families' order, the saves running at once: each is mostly the wait for
// a program and the kernel's dump.
func saveFamilies(ctx context.Context, backends map[items.Family]backend) []familySave {
	out := make([]familySave, len(families))
	var wg sync.WaitGroup
	for i, fam := range families {
		b, ok := backends[fam]
		if _, missing := b.(missingBackend); !ok || missing {
			continue // no programs: no chains to read (see MissingTools)
		}
		wg.Go(func() {
			out[i].tables, out[i].err = saveForReadBack(ctx, b)
		})
	}
	wg.Wait()
	return out
}

// saveForReadBack saves the family's tables and keeps them for the write
// that may follow (see afterWriteKey.readBackTables). Tables known
// without a save (savedBackend) are kept with the time of their save.
func saveForReadBack(ctx context.Context, b backend) (map[string]*tableView, error) {
	if sb, ok := b.(savedBackend); ok {
		if eb, ok := sb.backend.(*execBackend); ok {
			eb.key.keepReadBack(sb.saved.gen, sb.saved.at, sb.saved.tables)
		}
		return sb.saved.tables, nil
	}
	eb, _ := b.(*execBackend)
	if eb == nil {
		return b.save(ctx)
	}
	gen, at := eb.key.generation(), now()
	tables, err := b.save(ctx)
	if err == nil {
		eb.key.keepReadBack(gen, at, tables)
	}
	return tables, err
}

// readBackTable returns the owned chains of one table: those with the
// marker rule, and those netagent made whose marker was removed by hand
// (adoptable, with hint's rules; read back as they are, so that the
// reconciler rewrites them).
func readBackTable(fam items.Family, table string, v *tableView, recs *recordStore, made *madeStore, hint *dg.Graph) []dg.Item {
	var out []dg.Item
	for _, chain := range v.order {
		rules := v.chains[chain]
		if ownedRules(rules) {
			rules = rules[1:]
		} else if !adoptedChain(fam, table, chain, rules, recs, made, hint) {
			continue
		}
		out = append(out, readBackChain(&items.IptablesChain{Family: fam, Table: table, Chain: chain}, rules, v, recs, hint))
	}
	return out
}

// readBackChain returns the chain c names, holding rules (kernel form,
// marker excluded) in v. A chain that reads back exactly as its hint is
// the hint's item itself (items are values, never changed in place): no
// copy of its rules, and the caller's comparison with what it wrote finds
// the same item.
func readBackChain(c *items.IptablesChain, rules [][]string, v *tableView, recs *recordStore, hint *dg.Graph) dg.Item {
	from, at, n := findJump(v, c.Chain)
	c.JumpFrom, c.Position = from, at
	h := hintChain(hint, c.Name())
	c.Rules = readBackRules(rules, recs.get(c.Name()), h)
	if h != nil {
		alignWithHint(c, h, n, v)
		if c.Equal(h) {
			return h
		}
	}
	c.Rules = cloneRules(c.Rules)
	return c
}

// adoptedChain reports whether the unmarked chain is netagent's all the
// same (see adoptable).
func adoptedChain(fam items.Family, table, chain string, rules [][]string, recs *recordStore, made *madeStore, hint *dg.Graph) bool {
	name := (&items.IptablesChain{Family: fam, Table: table, Chain: chain}).Name()
	var intended [][]string
	if h := hintChain(hint, name); h != nil {
		intended = h.Rules
	}
	return adoptable(rules, intended, recs.get(name), made.has(name))
}

// findJump finds netagent's first jump to chain: the chain holding it, its
// 1-based position and the length of that chain.
func findJump(v *tableView, chain string) (from string, at, n int) {
	for _, f := range v.order {
		if pos := v.jumps(f, chain); len(pos) > 0 {
			return f, pos[0], len(v.chains[f])
		}
	}
	return "", 0, 0
}

// readBackRules returns the rules as the intent spells them when the
// kernel is known to hold them (see rulesMatch), else the kernel's form.
// The result shares its slices with its source: the caller copies it
// before it leaves the package.
func readBackRules(kernel [][]string, rec *chainRecord, h *items.IptablesChain) [][]string {
	switch {
	case h != nil && rulesMatch(kernel, h.Rules, rec):
		return h.Rules
	case rec != nil && equalRules(rec.Kernel, kernel):
		return rec.Intended
	}
	return kernel
}

// alignWithHint takes from the intended chain what the kernel cannot tell
// apart: the renderer's Deps, and a position that means the same place (a
// position past the end of the chain is the end; a jump in its place in
// netagent's block is at the block's position; any position without a
// jump is none). A jump elsewhere reads back at its absolute position.
func alignWithHint(c, h *items.IptablesChain, n int, v *tableView) {
	c.Deps = slices.Clone(h.Deps)
	switch {
	case c.JumpFrom == "" && h.JumpFrom == "":
		c.Position, c.BlockStart = h.Position, h.BlockStart
	case c.JumpFrom == h.JumpFrom && positionMatches(c.Position, n, v.jumpAt(h)):
		c.Position, c.BlockStart = h.Position, h.BlockStart
	}
}

// hintChain returns the intended chain of that name, or nil.
func hintChain(hint *dg.Graph, name string) *items.IptablesChain {
	if hint == nil {
		return nil
	}
	item, ok := hint.Get(dg.ItemRef{Type: items.TypeIptablesChain, Name: name})
	if !ok {
		return nil
	}
	c, _ := item.(*items.IptablesChain)
	return c
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
