package firewall

import (
	"context"
	"fmt"
	"slices"

	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// ApplyBatch applies independent chain operations with one iptables-restore
// transaction per family and table: one iptables-save per family to see the
// kernel (none right after a read-back: see afterWriteKey.readBackTables),
// one restore per table, and one save after it to learn the
// kernel's form of the rules (which is also the view for the family's next
// table). If a transaction fails, nothing of it was applied, and its
// operations are retried one by one so that each gets its own error.
func (c *chainConfigurator) ApplyBatch(ctx context.Context, ops []reconciler.BatchOp) []error {
	errs := make([]error, len(ops))
	views := make(map[items.Family]map[string]*tableView)
	for _, g := range groupBatch(ops, errs) {
		c.applyGroup(ctx, g, ops, errs, views)
	}
	return errs
}

// batchGroup is the operations of one family and table, by index.
type batchGroup struct {
	fam   items.Family
	table string
	idx   []int
}

// groupBatch groups ops by family and table, in order of first appearance.
func groupBatch(ops []reconciler.BatchOp, errs []error) []batchGroup {
	var groups []batchGroup
	at := make(map[string]int)
	for i, op := range ops {
		ch, err := opChain(op)
		if err != nil {
			errs[i] = err
			continue
		}
		key := ch.Family.String() + "/" + ch.Table
		g, ok := at[key]
		if !ok {
			g = len(groups)
			at[key] = g
			groups = append(groups, batchGroup{fam: ch.Family, table: ch.Table})
		}
		groups[g].idx = append(groups[g].idx, i)
	}
	return groups
}

// opChain returns the chain an operation is about.
func opChain(op reconciler.BatchOp) (*items.IptablesChain, error) {
	if op.Op == reconciler.OpDelete {
		return items.As[*items.IptablesChain](op.Old)
	}
	return items.As[*items.IptablesChain](op.New)
}

// applyGroup applies the operations of one family and table. views caches
// the family's tables as last saved.
func (c *chainConfigurator) applyGroup(ctx context.Context, g batchGroup, ops []reconciler.BatchOp,
	errs []error, views map[items.Family]map[string]*tableView) {
	v, err := c.groupView(ctx, g.fam, g.table, views)
	if err != nil {
		for _, i := range g.idx {
			errs[i] = opError(ops[i], err)
		}
		return
	}
	plans := make(map[int]*chainPlan)
	var ordered []*chainPlan
	var writes []int
	for _, i := range g.idx {
		p, err := planOp(v, ops[i], c.records, c.made)
		switch {
		case err != nil:
			errs[i] = opError(ops[i], err)
		case !p.empty():
			plans[i] = p
			ordered = append(ordered, p)
		}
		if err == nil && p.write {
			writes = append(writes, i)
		}
	}
	if err := c.recordMade(ops, writes); err != nil {
		for _, i := range writes {
			errs[i] = opError(ops[i], err)
			ordered = slices.DeleteFunc(ordered, func(p *chainPlan) bool { return p == plans[i] })
			delete(plans, i)
		}
	}
	if len(ordered) > 0 {
		delete(views, g.fam) // the kernel changes now
		if err := c.backends[g.fam].restore(ctx, renderTable(g.table, v, ordered)); err != nil {
			for _, i := range retryOrder(g.idx, plans) {
				errs[i] = c.applyOne(ctx, ops[i])
			}
			return
		}
	}
	c.learnGroup(ctx, g, ops, errs, plans, views)
}

// recordMade records, in one write, before the chains the operations at
// idx write are written, that netagent made them (see madeStore).
func (c *chainConfigurator) recordMade(ops []reconciler.BatchOp, idx []int) error {
	names := make([]string, 0, len(idx))
	for _, i := range idx {
		ch, err := opChain(ops[i])
		if err != nil {
			return err
		}
		names = append(names, ch.Name())
	}
	if err := c.made.add(names...); err != nil {
		return fmt.Errorf("recording the chain: %w", err)
	}
	return nil
}

// retryOrder lists the planned operations for a one-by-one retry: in the
// batch's order, but jumps by ascending position, as in a transaction, so
// that each lands where its item says.
func retryOrder(idx []int, plans map[int]*chainPlan) []int {
	var out []int
	for _, i := range idx {
		if plans[i] != nil {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int { return jumpPos(plans[a]) - jumpPos(plans[b]) })
	return out
}

// jumpPos is the position a plan inserts its jump at (0 for none).
func jumpPos(p *chainPlan) int {
	if p.jump == nil {
		return 0
	}
	return p.jump.pos
}

// groupView returns the view of one table, saving the family's tables
// unless views holds them, or the read-back has just saved them (see
// afterWriteKey.readBackTables).
func (c *chainConfigurator) groupView(ctx context.Context, fam items.Family, table string,
	views map[items.Family]map[string]*tableView) (*tableView, error) {
	b, err := c.backend(fam)
	if err != nil {
		return nil, err
	}
	tables, ok := views[fam]
	if eb, isExec := b.(*execBackend); !ok && isExec {
		tables, ok = eb.key.readBackTables()
	}
	if !ok {
		if tables, err = b.save(ctx); err != nil {
			return nil, err
		}
	}
	views[fam] = tables
	if v := tables[table]; v != nil {
		return v, nil
	}
	return newTableView(), nil
}

// learnGroup updates the records after a successful transaction: deleted
// chains are forgotten, written ones recorded in the kernel's form, in one
// write of the records file.
func (c *chainConfigurator) learnGroup(ctx context.Context, g batchGroup, ops []reconciler.BatchOp,
	errs []error, plans map[int]*chainPlan, views map[items.Family]map[string]*tableView) {
	var after *tableView
	if len(plans) > 0 {
		b := c.backends[g.fam]
		eb, _ := b.(*execBackend)
		var gen uint64
		if eb != nil {
			gen = eb.key.generation()
		}
		at := now()
		if tables, err := b.save(ctx); err == nil {
			views[g.fam] = tables
			after = tables[g.table]
			if eb != nil {
				eb.key.keep(gen, at, tables) // for the read-back right after (ReuseAfterWrite)
			}
		}
	}
	_ = c.records.batch(func() { // see learn
		for _, i := range g.idx {
			switch {
			case errs[i] != nil:
			case ops[i].Op == reconciler.OpDelete:
				ch, _ := items.As[*items.IptablesChain](ops[i].Old)
				_ = c.records.drop(ch)       // see learn
				_ = c.made.remove(ch.Name()) // see learn: at worst an empty chain of that name stays adoptable
			case plans[i] != nil && plans[i].write && after != nil:
				ch, _ := items.As[*items.IptablesChain](ops[i].New)
				c.learnFrom(after, ch, plans[i].fill)
			}
		}
	})
}

// planOp plans one batched operation against the view.
func planOp(v *tableView, op reconciler.BatchOp, recs *recordStore, made *madeStore) (*chainPlan, error) {
	switch op.Op {
	case reconciler.OpDelete:
		ch, err := items.As[*items.IptablesChain](op.Old)
		if err != nil {
			return nil, err
		}
		return planDelete(v, ch, made.has(ch.Name()))
	case reconciler.OpModify:
		old, err := items.As[*items.IptablesChain](op.Old)
		if err != nil {
			return nil, err
		}
		ch, err := items.As[*items.IptablesChain](op.New)
		if err != nil {
			return nil, err
		}
		return planApply(v, old, ch, recs.get(ch.Name()), made.has(ch.Name()))
	}
	ch, err := items.As[*items.IptablesChain](op.New)
	if err != nil {
		return nil, err
	}
	return planApply(v, nil, ch, recs.get(ch.Name()), made.has(ch.Name()))
}

// applyOne applies one operation on its own.
func (c *chainConfigurator) applyOne(ctx context.Context, op reconciler.BatchOp) error {
	switch op.Op {
	case reconciler.OpDelete:
		return c.Delete(ctx, op.Old)
	case reconciler.OpModify:
		return c.Modify(ctx, op.Old, op.New)
	}
	return c.Create(ctx, op.New)
}

// opError names the operation and its chain, as Create, Modify and Delete
// do.
func opError(op reconciler.BatchOp, err error) error {
	ch, cerr := opChain(op)
	if cerr != nil {
		return err
	}
	verb := "creating"
	switch op.Op {
	case reconciler.OpDelete:
		verb = "deleting"
	case reconciler.OpModify:
		verb = "modifying"
	}
	return fmt.Errorf("%s iptables chain %s: %w", verb, ch.Name(), err)
}
