package firewall

import (
	"context"
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// chainConfigurator manages iptables-chain items: a user chain with all its
// rules and the jump to it, replaced as a whole in one iptables-restore
// transaction.
type chainConfigurator struct {
	backends map[items.Family]backend
	records  *recordStore
	made     *madeStore // the chains netagent wrote in this namespace instance
}

var _ reconciler.BatchConfigurator = (*chainConfigurator)(nil)

// Create makes the chain exist with its rules and jump. A chain of that
// name that netagent owns is brought to the item (so creating twice is a
// no-op); one it does not own is an ErrNotOwned error.
func (c *chainConfigurator) Create(ctx context.Context, item dg.Item) error {
	ch, err := items.As[*items.IptablesChain](item)
	if err != nil {
		return err
	}
	if err := c.apply(ctx, nil, ch); err != nil {
		return fmt.Errorf("creating iptables chain %s: %w", ch.Name(), err)
	}
	return nil
}

// Modify rewrites the chain's rules and moves its jump, in one transaction,
// writing nothing when the kernel already holds newItem.
func (c *chainConfigurator) Modify(ctx context.Context, oldItem, newItem dg.Item) error {
	old, err := items.As[*items.IptablesChain](oldItem)
	if err != nil {
		return err
	}
	ch, err := items.As[*items.IptablesChain](newItem)
	if err != nil {
		return err
	}
	if err := c.apply(ctx, old, ch); err != nil {
		return fmt.Errorf("modifying iptables chain %s: %w", ch.Name(), err)
	}
	return nil
}

// Delete removes the jump and the chain in one transaction. A chain that is
// gone is fine; one netagent does not own is an ErrNotOwned error.
func (c *chainConfigurator) Delete(ctx context.Context, item dg.Item) error {
	ch, err := items.As[*items.IptablesChain](item)
	if err != nil {
		return err
	}
	if err := c.remove(ctx, ch); err != nil {
		return fmt.Errorf("deleting iptables chain %s: %w", ch.Name(), err)
	}
	return nil
}

// NeedsRecreate delegates to items.NeedsRecreate: a chain is always
// changed in place.
func (c *chainConfigurator) NeedsRecreate(oldItem, newItem dg.Item) bool {
	return items.NeedsRecreate(oldItem, newItem)
}

func (c *chainConfigurator) backend(fam items.Family) (backend, error) {
	b, ok := c.backends[fam]
	if !ok {
		return nil, fmt.Errorf("family %v: %w", fam, ErrFamily)
	}
	return b, nil
}

// apply turns old (nil for a create) into ch.
func (c *chainConfigurator) apply(ctx context.Context, old, ch *items.IptablesChain) error {
	b, err := c.backend(ch.Family)
	if err != nil {
		return err
	}
	v, err := b.list(ctx, ch.Table, append([]string{ch.Chain}, jumpSources(old, ch)...)...)
	if err != nil {
		return err
	}
	p, err := planApply(v, old, ch, c.records.get(ch.Name()), c.made.has(ch.Name()))
	if err != nil || p.empty() {
		return err
	}
	if p.write {
		if err := c.made.add(ch.Name()); err != nil {
			return fmt.Errorf("recording the chain: %w", err)
		}
	}
	if err := b.restore(ctx, renderTable(ch.Table, v, []*chainPlan{p}, false)); err != nil {
		return err
	}
	if p.write {
		c.learn(ctx, b, ch, p.fill)
	}
	return nil
}

// remove deletes ch.
func (c *chainConfigurator) remove(ctx context.Context, ch *items.IptablesChain) error {
	b, err := c.backend(ch.Family)
	if err != nil {
		return err
	}
	v, err := b.list(ctx, ch.Table, append([]string{ch.Chain}, jumpSources(nil, ch)...)...)
	if err != nil {
		return err
	}
	p, err := planDelete(v, ch, c.made.has(ch.Name()))
	if err != nil {
		return err
	}
	if !p.empty() {
		if err := b.restore(ctx, renderTable(ch.Table, v, []*chainPlan{p}, false)); err != nil {
			return err
		}
	}
	_ = c.records.drop(ch) // a stale record is harmless: it never matches again
	return c.made.remove(ch.Name())
}

// learn reads back the chain just written and records the kernel's form of
// its rules. Failures only cost a rewrite later, so they are not errors of
// the operation, which has succeeded.
func (c *chainConfigurator) learn(ctx context.Context, b backend, ch *items.IptablesChain, fill string) {
	v, err := b.list(ctx, ch.Table, ch.Chain)
	if err != nil {
		return
	}
	c.learnFrom(v, ch, fill)
}

// learnFrom records the kernel form of ch's rules as v shows them, fill
// being the lines that wrote them (see putWritten).
func (c *chainConfigurator) learnFrom(v *tableView, ch *items.IptablesChain, fill string) {
	rules, ok := v.rules(ch.Chain)
	if !ok || !ownedRules(rules) {
		_ = c.records.drop(ch) // see learn
		return
	}
	if equalRules(rules[1:], ch.Rules) {
		_ = c.records.drop(ch) // the kernel spells the rules as the item does
		return
	}
	var text []string
	if t := v.ruleText(ch.Chain); t != nil {
		text = t[1:]
	}
	_ = c.records.putWritten(ch, rules[1:], fill, text) // see learn
}
