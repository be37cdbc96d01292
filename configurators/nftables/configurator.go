package nftables

import (
	"context"
	"errors"
	"fmt"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// ClashError says that a table of the intent's family and name exists and
// is not netagent's: it is left alone, never taken over.
type ClashError struct{ Table string }

func (e *ClashError) Error() string {
	return fmt.Sprintf("nftables table %s exists and is not netagent's (no chain %s): left alone", e.Table, items.NftOwnerChain)
}

// configurator writes items.NftTable: every operation is one batch, one
// kernel transaction.
type configurator struct{ k kernel }

var _ reconciler.Configurator = (*configurator)(nil)

// Register registers the nft-table configurator for namespace t.
func Register(reg *reconciler.TypeRegistry, t *netnsx.Target) error { return registerIn(reg, t, "") }

// registerIn is Register with the dumps kept in stateDir ("": none).
func registerIn(reg *reconciler.TypeRegistry, t *netnsx.Target, stateDir string) error {
	k := NetlinkKernel(t, 0).(netlinkKernel)
	k.stateDir = stateDir
	return reg.Register(items.TypeNftTable, &configurator{k: k})
}

func kernelOf(t *netnsx.Target) kernel {
	if t == nil {
		return netlinkKernel{nsfd: -1}
	}
	return netlinkKernel{nsfd: int(t.NsHandle())}
}

// Kernel is the configurator's access to nftables, for tests that put
// something between the two (NetlinkKernel, FakeKernel).
type Kernel = kernel

// NetlinkKernel is the configurator's kernel of namespace t (nil: the
// caller's), with set elements beyond maxBatch bytes of a batch in
// follow-up batches (0: the default, 8 MiB).
func NetlinkKernel(t *netnsx.Target, maxBatch int) Kernel {
	k := kernelOf(t).(netlinkKernel)
	k.maxBatch, k.reuse = maxBatch, true
	return k
}

// NewConfigurator returns the nft-table configurator over k.
func NewConfigurator(k Kernel) reconciler.Configurator { return &configurator{k: k} }

// dump reads the table of it: absent (ok false), or netagent's; another
// writer's table is a ClashError.
func (c *configurator) dump(it *items.NftTable) (d Dumped, ok bool, err error) {
	d, ok, err = c.k.DumpTable(it.Family, it.Table)
	if err != nil || !ok {
		return d, false, err
	}
	if !d.Owned {
		return d, false, &ClashError{Table: it.Name()}
	}
	return d, true, nil
}

// Create makes the table; one of netagent's of the same name (left by a
// crash) is made what it says in the same transaction.
func (c *configurator) Create(_ context.Context, item dg.Item) error {
	return c.converge(item.(*items.NftTable))
}

// Modify changes what differs between the kernel's table and the new
// one, in one transaction: unchanged rules keep their handles and
// counters.
func (c *configurator) Modify(_ context.Context, _, newItem dg.Item) error {
	return c.converge(newItem.(*items.NftTable))
}

// converge reads the table and writes the difference to it in one batch,
// checked against the generation of the read: a writer in between fails
// it with ErrGenerationChanged, for the reconcile to retry.
func (c *configurator) converge(it *items.NftTable) error {
	d, mine, err := c.dump(it)
	if err != nil {
		return err
	}
	wc := it.Canonical()
	ops := []Op{{Kind: OpCreateTable, Table: *it}}
	if mine {
		ops = diffCanonical(d, it, &wc)
	}
	if len(ops) == 0 {
		return nil
	}
	var before map[string][]uint64 // the handles ops start from (none: a new table)
	if mine {
		before = d.Handles
	}
	if err := c.apply(d.Gen, ops, &wc, before); err != nil {
		return fmt.Errorf("nftables table %s: %w", it.Name(), err)
	}
	return nil
}

// tableWriter is a kernel that, after its own batch, knows the table it
// wrote without a dump (netlinkKernel.ApplyTable).
type tableWriter interface {
	ApplyTable(gen uint32, ops []Op, want items.NftTable, before map[string][]uint64) error
}

// apply writes ops, which make the table wc (in canonical form) out of
// the one whose rules have the handles before.
func (c *configurator) apply(gen uint32, ops []Op, wc *items.NftTable, before map[string][]uint64) error {
	if tw, ok := c.k.(tableWriter); ok {
		return tw.ApplyTable(gen, ops, *wc, before)
	}
	return c.k.ApplyBatch(gen, ops)
}

// Delete removes the table if it is netagent's.
func (c *configurator) Delete(_ context.Context, item dg.Item) error {
	it := item.(*items.NftTable)
	d, mine, err := c.dump(it)
	if err != nil || !mine {
		return err
	}
	if err := c.k.ApplyBatch(d.Gen, []Op{{Kind: OpDeleteTable, Table: *it}}); err != nil {
		return fmt.Errorf("nftables table %s: %w", it.Name(), err)
	}
	return nil
}

// NeedsRecreate is false: Modify changes the table in place, and what
// the kernel cannot change in place (a base chain's hook, priority, type
// or device; a set's type or flags) it deletes and adds again within the
// same transaction, so the rest of the table keeps its handles and
// counters and no packet sees the table half-written.
func (c *configurator) NeedsRecreate(_, _ dg.Item) bool { return false }

// ReadBack returns netagent's tables in namespace t (those with its mark).
// A table not changed since its last dump or netagent's own last write of
// it (the ruleset's generation is still theirs) is not dumped again.
func ReadBack(t *netnsx.Target) ([]dg.Item, error) { return ReadBackIn(t, "") }

// ReadBackIn is ReadBack that also takes (and keeps) the last dump of each
// table in stateDir ("": none), for the next process.
func ReadBackIn(t *netnsx.Target, stateDir string) ([]dg.Item, error) {
	k := kernelOf(t).(netlinkKernel)
	k.reuse, k.tableOnly, k.stateDir = true, true, stateDir
	return readBack(k)
}

// readBack is netagent's tables in k; none in a kernel without nf_tables
// (ErrNoNftables), where the intent's tables fail at their create with
// that error and everything else converges.
func readBack(k kernel) ([]dg.Item, error) {
	tables, err := k.ListTables()
	if errors.Is(err, ErrNoNftables) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []dg.Item
	for _, ft := range tables {
		d, ok, err := k.DumpTable(ft[0], ft[1])
		if err != nil {
			return nil, err
		}
		if ok && d.Owned {
			tab := d.Table
			out = append(out, &tab)
		}
	}
	return out, nil
}
