package reconciler

import (
	"context"
	"fmt"
	"slices"
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

// execute runs the proposals of a wave: deletes, then modifies, then
// creates, each in the order they were proposed; the operations of one item
// type are run together, so that a BatchConfigurator gets them in one call.
func (u *run) execute(props *[3][]proposal) {
	if !u.beforeChange(props) {
		return
	}
	for k, group := range props {
		if k > 0 {
			group = u.stillReady(group)
		}
		start := 0
		for _, end := range u.groupByType(group) {
			u.executeGroup(group[start:end])
			start = end
		}
	}
}

// stillReady drops the creates and modifies whose item was evicted, or a
// dependency of which was, after they were proposed (by an item later in
// the same wave): they are looked at again in the next wave. A proposal
// with no eviction since is kept without a look.
func (u *run) stillReady(group []proposal) []proposal {
	kept := group[:0]
	for _, p := range group {
		if p.evictSeq == u.evictSeq {
			kept = append(kept, p)
			continue
		}
		w := u.want(p.node)
		if !u.has(p.node, fEvict) && w.ok {
			if !u.blocked(&w) {
				kept = append(kept, p)
				continue
			}
		}
		u.enqueue(p.node)
	}
	return kept
}

// groupByType orders the proposals by item type, types in order of first
// appearance, keeping the order within a type, and returns where the
// proposals of each type end. A single type (the common case) costs one
// pass; more cost one more (a counting sort).
func (u *run) groupByType(group []proposal) []int {
	g := u.grouping
	if g == nil {
		g = &grouping{}
		g.types, g.ends = g.fewTypes[:0], g.fewEnds[:0]
		u.grouping = g
	}
	g.types, g.ends = g.types[:0], g.ends[:0]
	last := -1
	for _, p := range group {
		if t := p.node.Type(); last < 0 || g.types[last] != t {
			if last = slices.Index(g.types, t); last < 0 {
				last = len(g.types)
				g.types = append(g.types, t)
			}
		}
	}
	if len(g.types) <= 1 {
		if len(group) > 0 {
			g.ends = append(g.ends, len(group))
		}
		return g.ends
	}
	g.kinds = slices.Grow(g.kinds[:0], len(group))
	next := make([]int, len(g.types)) // where the next proposal of each type goes
	last = 0
	for _, p := range group {
		if t := p.node.Type(); g.types[last] != t {
			last = slices.Index(g.types, t)
		}
		g.kinds = append(g.kinds, int32(last))
		next[last]++
	}
	end := 0
	for k, n := range next {
		next[k] = end
		end += n
		g.ends = append(g.ends, end)
	}
	sorted := slices.Grow(g.buf[:0], len(group))[:len(group)]
	for i, p := range group {
		sorted[next[g.kinds[i]]] = p
		next[g.kinds[i]]++
	}
	copy(group, sorted)
	clear(sorted)
	g.buf = sorted[:0]
	return g.ends
}

// grouping is groupByType's scratch space, kept from wave to wave.
type grouping struct {
	types    []string
	kinds    []int32 // the type of each proposal, by index in types
	ends     []int
	buf      []proposal
	fewTypes [4]string // the first arrays of types and ends
	fewEnds  [4]int
}

func opRank(op Operation) int {
	switch op {
	case OpDelete:
		return 0
	case OpModify:
		return 1
	}
	return 2
}

func (p proposal) item() dg.Item {
	if p.new != nil {
		return p.new
	}
	return p.node.Item()
}

func (u *run) executeGroup(group []proposal) {
	cfg := u.r.reg.Configurator(group[0].item())
	if b, ok := cfg.(BatchConfigurator); ok && len(group) > 1 && !u.dry {
		u.executeBatch(b, group)
		return
	}
	u.reserveLog(len(group)) // at most one entry each: not grown step by step
	for _, p := range group {
		u.executeOne(cfg, p)
	}
}

func (u *run) executeBatch(b BatchConfigurator, group []proposal) {
	ops := make([]BatchOp, len(group))
	for i, p := range group {
		ops[i] = BatchOp{Op: p.op, Old: p.old(), New: p.new}
	}
	start := u.r.now()
	errs := b.ApplyBatch(u.ctx, ops)
	end := u.r.now()
	u.reserveLog(len(group)) // ops is garbage now (not used below)
	for i, p := range group {
		var err error
		if i < len(errs) {
			err = errs[i]
		} else {
			err = fmt.Errorf("batch returned %d results for %d operations", len(errs), len(group))
		}
		e := u.entry(p, start)
		e.Batch = int32(len(group))
		u.finish(p, e, end, err)
	}
}

func (u *run) executeOne(cfg Configurator, p proposal) {
	e := u.entry(p, u.r.now())
	if cfg == nil {
		u.finish(p, e, u.r.now(), fmt.Errorf("%w %q", ErrNoConfigurator, p.node.Type()))
		return
	}
	if u.dry {
		u.finish(p, e, e.Start, u.predicted(p))
		return
	}
	ctx := u.opContext(p, e)
	err := call(cfg, ctx, p)
	if ctx.isAsync() {
		u.spare = nil
		if err != nil { // the configurator changed its mind: no background work
			ctx.finish(err)
		}
		u.started(p, e, ctx)
		return
	}
	u.finish(p, e, u.r.now(), err)
}

// predicted is the error a dry run predicts for p (see WithPrediction).
func (u *run) predicted(p proposal) error {
	if u.r.predict == nil {
		return nil
	}
	return u.r.predict(p.op, p.item())
}

func call(cfg Configurator, ctx context.Context, p proposal) error {
	switch p.op {
	case OpCreate:
		return cfg.Create(ctx, p.new)
	case OpModify:
		return cfg.Modify(ctx, p.old(), p.new)
	}
	return cfg.Delete(ctx, p.old())
}

// opContext returns the context for one call, reusing the last one if the
// call it served stayed synchronous.
func (u *run) opContext(p proposal, e OpLogEntry) *opCtx {
	c := u.spare
	if c == nil {
		c = &opCtx{}
		u.spare = c
	} else {
		c.reset()
	}
	c.parent, c.ref, c.op, c.item, c.start = u.ctx, p.ref(), p.op, p.item(), e.Start
	c.scope, c.notify = u.scope, u.rec.notifier
	return c
}

func (u *run) entry(p proposal, start time.Time) OpLogEntry {
	return OpLogEntry{Ref: p.ref(), Item: p.item(), Op: p.op, Recreate: p.recreate, Start: start, PrevErr: p.node.State().LastErr}
}
