package firewall

import (
	"context"
	"fmt"
	"slices"

	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// ForeignChain is an iptables chain that is not netagent's, as `show
// --all` lists it: a chain someone else made, or a built-in chain holding
// rules other than netagent's jumps.
type ForeignChain struct {
	Family items.Family
	Table  string
	Chain  string
	// BuiltIn: a chain of the table itself (INPUT, FORWARD, ...); Rules
	// are then only those that are not netagent's jumps.
	BuiltIn bool
	// Rules in kernel form (the arguments after "-A <chain>").
	Rules [][]string
}

// Name is the chain's name as an iptables-chain item's: family/table/chain.
func (c *ForeignChain) Name() string {
	return (&items.IptablesChain{Family: c.Family, Table: c.Table, Chain: c.Chain}).Name()
}

// builtInChains are the chains the tables have of their own.
var builtInChains = []string{"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"}

// ReadForeignChains returns the iptables chains in namespace t that are
// not netagent's (see ForeignChain), one iptables-save per family. A
// family whose iptables programs are missing is skipped.
func ReadForeignChains(t *netnsx.Target, stateDir string) ([]ForeignChain, error) {
	chains, err := newChainConfigurator(t, stateDir)
	if err != nil {
		return nil, err
	}
	var out []ForeignChain
	for _, fam := range families {
		b, ok := chains.backends[fam]
		if _, missing := b.(missingBackend); !ok || missing {
			continue
		}
		tables, err := b.save(context.Background())
		if err != nil {
			return nil, fmt.Errorf("reading %v iptables chains: %w", fam, err)
		}
		for _, table := range sortedKeys(tables) {
			out = append(out, foreignChains(fam, table, tables[table], chains)...)
		}
	}
	return out, nil
}

// foreignChains returns the chains of one table that are not netagent's.
func foreignChains(fam items.Family, table string, v *tableView, c *chainConfigurator) []ForeignChain {
	var out []ForeignChain
	for _, chain := range v.order {
		rules := v.chains[chain]
		if ownedRules(rules) || adoptedChain(fam, table, chain, rules, c.records, c.made, nil) {
			continue
		}
		fc := ForeignChain{Family: fam, Table: table, Chain: chain, BuiltIn: slices.Contains(builtInChains, chain)}
		for _, r := range rules {
			if !fc.BuiltIn || !isOwnJump(r) {
				fc.Rules = append(fc.Rules, slices.Clone(r))
			}
		}
		if fc.BuiltIn && len(fc.Rules) == 0 {
			continue // nothing in it but netagent's jumps, if that
		}
		out = append(out, fc)
	}
	return out
}

// isOwnJump reports whether r is netagent's jump to a chain.
func isOwnJump(r []string) bool {
	return len(r) == len(markerRule)+2 && slices.Equal(r[:len(markerRule)], markerRule) && r[len(markerRule)] == "-j"
}
