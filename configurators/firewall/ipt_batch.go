package firewall

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// ApplyBatch applies independent chain operations with one iptables-restore
// transaction per family and table: one iptables-save per family to see the
// kernel (none right after a read-back: see afterWriteKey.readBackTables),
// one restore per table, and what the restore left, to learn the kernel's
// form of the rules (which is also the view for the family's next table):
// printed by the restore itself where iptables can (execBackend.listing),
// else one save after it. If a transaction fails, nothing of it was
// applied, and its operations are retried one by one so that each gets its
// own error.
func (c *chainConfigurator) ApplyBatch(ctx context.Context, ops []reconciler.BatchOp) []error {
	errs := make([]error, len(ops))
	views := make(map[items.Family]familyView)
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

// familyView is a family's tables as last seen, and when: the start of the
// save that saw them (of the oldest, when some were seen later).
type familyView struct {
	tables map[string]*tableView
	at     time.Time
}

// applyGroup applies the operations of one family and table. views caches
// the family's tables as last seen.
func (c *chainConfigurator) applyGroup(ctx context.Context, g batchGroup, ops []reconciler.BatchOp,
	errs []error, views map[items.Family]familyView) {
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
	var listed *tableView
	if len(ordered) > 0 {
		prior := views[g.fam]
		delete(views, g.fam) // the kernel changes now
		var err error
		if listed, err = c.restoreGroup(ctx, g, v, ordered); err != nil {
			for _, i := range retryOrder(g.idx, plans) {
				errs[i] = c.applyOne(ctx, ops[i])
			}
			return
		}
		if listed != nil && listedAll(listed, ordered) {
			views[g.fam] = withTable(prior, g.table, listed)
		}
	}
	c.learnGroup(ctx, g, ops, errs, plans, views)
}

// restoreGroup commits the plans of one table in one transaction. Where
// the family's iptables lists what a transaction leaves
// (execBackend.listing), it returns the table as the restore listed it:
// nil when it did not, or its listing did not parse (the caller then
// saves). A transaction with the listing that fails is tried once more
// without it, in case this iptables refuses "-S" in a restore: if that
// works, the family's restores list nothing from then on.
func (c *chainConfigurator) restoreGroup(ctx context.Context, g batchGroup, v *tableView, plans []*chainPlan) (*tableView, error) {
	b := c.backends[g.fam]
	eb, ok := b.(*execBackend)
	if !ok || !eb.listing.Load() {
		return nil, b.restore(ctx, renderTable(g.table, v, plans, false))
	}
	listed, err := eb.restoreListed(ctx, renderTable(g.table, v, plans, true))
	if err != nil {
		if eb.restore(ctx, renderTable(g.table, v, plans, false)) != nil {
			return nil, err
		}
		eb.listing.Store(false)
		return nil, nil
	}
	return listed, nil
}

// listedAll reports whether a listing is of the table the plans leave:
// it declares chains (iptables lists a table's built-in chains always),
// among them every chain the plans wrote and every chain they put a jump
// into or took one from, and none they deleted. Else the caller saves
// instead (a listing that is not the transaction's is never learnt).
func listedAll(listed *tableView, plans []*chainPlan) bool {
	if len(listed.order) == 0 {
		return false
	}
	has := func(chain string) bool { _, ok := listed.rules(chain); return ok }
	for _, p := range plans {
		if has(p.chain) == p.drop || p.write && !has(p.chain) || p.jump != nil && !has(p.jump.from) {
			return false
		}
		for from := range p.delJumps {
			if !has(from) {
				return false
			}
		}
	}
	return true
}

// withTable returns the family's tables with table as listed after a
// write: the other tables as seen before it (the write did not touch them),
// and when they were seen.
func withTable(prior familyView, table string, listed *tableView) familyView {
	tables := make(map[string]*tableView, len(prior.tables)+1)
	for name, v := range prior.tables {
		tables[name] = v
	}
	tables[table] = listed
	return familyView{tables: tables, at: prior.at}
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
	views map[items.Family]familyView) (*tableView, error) {
	b, err := c.backend(fam)
	if err != nil {
		return nil, err
	}
	fv, ok := views[fam]
	if eb, isExec := b.(*execBackend); !ok && isExec {
		var s savedTables
		if s, ok = eb.key.readBackTables(); ok {
			fv = familyView{tables: s.tables, at: s.at}
		}
	}
	if !ok {
		fv.at = now()
		if fv.tables, err = b.save(ctx); err != nil {
			return nil, err
		}
	}
	views[fam] = fv
	if v := fv.tables[table]; v != nil {
		return v, nil
	}
	return newTableView(), nil
}

// learnGroup updates the records after a successful transaction: deleted
// chains are forgotten, written ones recorded in the kernel's form, in one
// write of the records file. views holds the family's tables after the
// write when the restore listed them (restoreGroup); else they are saved.
func (c *chainConfigurator) learnGroup(ctx context.Context, g batchGroup, ops []reconciler.BatchOp,
	errs []error, plans map[int]*chainPlan, views map[items.Family]familyView) {
	var after *tableView
	if len(plans) > 0 {
		if fv, ok := c.tablesAfter(ctx, g.fam, views); ok {
			views[g.fam] = fv
			after = fv.tables[g.table]
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

// tablesAfter returns the family's tables right after a write: those in
// views (the restore listed them), else saved (false when the save
// fails); and keeps them for the read-back right after (ReuseAfterWrite).
func (c *chainConfigurator) tablesAfter(ctx context.Context, fam items.Family, views map[items.Family]familyView) (familyView, bool) {
	b := c.backends[fam]
	eb, _ := b.(*execBackend)
	var gen uint64
	if eb != nil {
		gen = eb.key.generation()
	}
	fv, ok := views[fam]
	if !ok {
		fv.at = now()
		var err error
		if fv.tables, err = b.save(ctx); err != nil {
			return familyView{}, false
		}
	}
	if eb != nil {
		eb.key.keep(gen, fv.at, fv.tables)
	}
	return fv, true
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
