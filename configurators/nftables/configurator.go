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
func Register(reg *reconciler.TypeRegistry, t *netnsx.Target) error {
	return reg.Register(items.TypeNftTable, &configurator{k: kernelOf(t)})
}

func kernelOf(t *netnsx.Target) kernel {
	if t == nil {
		return netlinkKernel{nsfd: -1}
	}
	return netlinkKernel{nsfd: int(t.NsHandle())}
}

// owned checks that the table of it is absent (false) or netagent's
// (true); another writer's table is a ClashError.
func (c *configurator) owned(it *items.NftTable) (bool, error) {
	d, ok, err := c.k.DumpTable(it.Family, it.Table)
	if err != nil || !ok {
		return false, err
	}
	if !d.Owned {
		return false, &ClashError{Table: it.Name()}
	}
	return true, nil
}

// Create makes the table; one of netagent's of the same name (left by a
// crash) is replaced in the same transaction.
func (c *configurator) Create(_ context.Context, item dg.Item) error {
	it := item.(*items.NftTable)
	mine, err := c.owned(it)
	if err != nil {
		return err
	}
	ops := []Op{{Table: *it}}
	if mine {
		ops = []Op{{Delete: true, Table: *it}, {Table: *it}}
	}
	return c.k.ApplyBatch(ops)
}

// Modify replaces the table as a whole: its deletion and creation are one
// transaction, so no packet sees it half-written.
func (c *configurator) Modify(_ context.Context, _, newItem dg.Item) error {
	it := newItem.(*items.NftTable)
	mine, err := c.owned(it)
	if err != nil {
		return err
	}
	if !mine {
		return c.k.ApplyBatch([]Op{{Table: *it}})
	}
	return c.k.ApplyBatch([]Op{{Delete: true, Table: *it}, {Table: *it}})
}

// Delete removes the table if it is netagent's.
func (c *configurator) Delete(_ context.Context, item dg.Item) error {
	it := item.(*items.NftTable)
	mine, err := c.owned(it)
	if err != nil || !mine {
		return err
	}
	return c.k.ApplyBatch([]Op{{Delete: true, Table: *it}})
}

// NeedsRecreate is false: Modify replaces the whole table.
func (c *configurator) NeedsRecreate(_, _ dg.Item) bool { return false }

// ReadBack returns netagent's tables in namespace t (those with its mark).
func ReadBack(t *netnsx.Target) ([]dg.Item, error) {
	return readBack(kernelOf(t))
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
