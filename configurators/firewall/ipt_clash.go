package firewall

import (
	"context"
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// Clashes finds the chains of hint (the intended graph) whose name a
// chain without netagent's marker rule already has in the same family and
// table, and returns for each the error its create fails with
// (ErrNotOwned). It is ReadBack's counterpart for `plan`, which predicts
// these failures instead of planning creates that apply would then fail.
// Sysctls have no owner: nothing clashes with them.
func Clashes(t *netnsx.Target, stateDir string, hint *dg.Graph) (map[dg.ItemRef]error, error) {
	if hint == nil {
		return nil, nil
	}
	chains, err := newChainConfigurator(t, stateDir)
	if err != nil {
		return nil, err
	}
	return chainClashes(context.Background(), chains, hint)
}

// chainClashes reads each family that hint has chains of once.
func chainClashes(ctx context.Context, chains *chainConfigurator, hint *dg.Graph) (map[dg.ItemRef]error, error) {
	want := make(map[items.Family][]*items.IptablesChain)
	for it := range hint.Items() {
		if c, ok := it.(*items.IptablesChain); ok {
			want[c.Family] = append(want[c.Family], c)
		}
	}
	out := make(map[dg.ItemRef]error)
	for _, fam := range families {
		b, ok := chains.backends[fam]
		if !ok || len(want[fam]) == 0 {
			continue
		}
		if m, missing := b.(missingBackend); missing {
			for _, c := range want[fam] { // apply fails them so (see MissingTools)
				out[dg.Ref(c)] = fmt.Errorf("creating iptables chain %s: %w", c.Name(), m.err)
			}
			continue
		}
		tables, err := b.save(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading %v iptables chains: %w", fam, err)
		}
		for _, c := range want[fam] {
			if foreignChain(tables[c.Table], c, chains.records.get(c.Name()), chains.made.has(c.Name())) {
				out[dg.Ref(c)] = fmt.Errorf("creating iptables chain %s: %w", c.Name(), errForeign)
			}
		}
	}
	return out, nil
}

// foreignChain reports whether v (nil: the table is not loaded) holds a
// chain of c's name without the marker rule that netagent cannot take
// back (see planApply).
func foreignChain(v *tableView, c *items.IptablesChain, rec *chainRecord, made bool) bool {
	if v == nil {
		return false
	}
	rules, exists := v.rules(c.Chain)
	return exists && !chainOwned(rules, c.Rules, rec, made)
}
