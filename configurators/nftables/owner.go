package nftables

import (
	"context"
	"errors"
	"fmt"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// MarkLostError says that a table netagent recorded as its own (see
// records.go) is there without netagent's mark: someone deleted the mark
// chain, or deleted the table and made one of the same name. It is
// reported and left alone: taking it back could overwrite someone's
// rules, deleting it could cut their traffic.
type MarkLostError struct {
	Table string
	Made  time.Time
}

func (e *MarkLostError) Error() string {
	return fmt.Sprintf("nftables table %s was made by netagent (%s) but has lost its mark chain %s "+
		"(someone deleted the chain, or deleted the table and made one of the same name): left alone; "+
		"delete the table to have netagent make it again", e.Table, e.Made.Format(time.RFC3339), items.NftOwnerChain)
}

// owning is the table configurator with the state directory's record of
// the tables netagent made: a table is recorded before the batch that
// creates it and forgotten after the one that deletes it, and a table
// of the intent's name without the mark is refused before any write, as
// a ClashError or, when recorded, a MarkLostError.
type owning struct {
	inner  reconciler.Configurator
	tables tableReader
	rec    *records
}

var _ reconciler.Configurator = (*owning)(nil)

// RegisterWith registers the nft-table configurator for namespace t,
// recording the tables it makes in stateDir ("": none recorded).
func RegisterWith(reg *reconciler.TypeRegistry, t *netnsx.Target, stateDir string) error {
	rec, err := newRecords(t, stateDir)
	if err != nil {
		return err
	}
	scratch := &reconciler.TypeRegistry{}
	if err := registerIn(scratch, t, stateDir); err != nil {
		return err
	}
	return reg.Register(items.TypeNftTable, wrap(scratch.Configurator(&items.NftTable{}), readerOf(t), rec))
}

// wrap is inner with the records: an owningBatch when inner takes
// batches, so that they stay batches.
func wrap(inner reconciler.Configurator, tables tableReader, rec *records) reconciler.Configurator {
	o := &owning{inner: inner, tables: tables, rec: rec}
	if b, ok := inner.(reconciler.BatchConfigurator); ok {
		return owningBatch{owning: o, batch: b}
	}
	return o
}

// look returns what stands at it's place: whether a table of its family
// and name exists and is marked, the record of it (nil: none), and the
// IDs of the recorded tables that are gone.
func (o *owning) look(it *items.NftTable) (exists, marked bool, made *MadeTable, gone []string, err error) {
	recorded, err := o.rec.get()
	if err != nil {
		return false, false, nil, nil, err
	}
	ts, err := o.tables.Tables()
	if err != nil {
		return false, false, nil, nil, err
	}
	present := map[string]bool{}
	for _, t := range ts {
		present[t.ID()] = true
		if t.ID() == it.Name() {
			exists, marked = true, t.Marked
		}
	}
	for id := range recorded {
		if !present[id] {
			gone = append(gone, id)
		}
	}
	if m, ok := recorded[it.Name()]; ok {
		made = &m
	}
	return exists, marked, made, gone, nil
}

// notOwned is the refusal of a table that exists without the mark.
func notOwned(it *items.NftTable, made *time.Time) error {
	if made != nil {
		return &MarkLostError{Table: it.Name(), Made: *made}
	}
	return &ClashError{Table: it.Name()}
}

// when is m's time of making, nil for no record.
func (m *MadeTable) when() *time.Time {
	if m == nil {
		return nil
	}
	return &m.Made
}

// recordState is what prepare found of an operation's table: recorded
// before it, or recorded by it.
type recordState struct{ recorded, added bool }

// prepare refuses an operation on a table without the mark, and records
// the table of a create or modify before it runs (unless recorded
// already), dropping the records of tables that are gone.
func (o *owning) prepare(op reconciler.Operation, it *items.NftTable) (recordState, error) {
	exists, marked, made, gone, err := o.look(it)
	if err != nil {
		return recordState{}, err
	}
	if exists && !marked {
		return recordState{}, notOwned(it, made.when())
	}
	p := recordState{recorded: made != nil}
	if op != reconciler.OpDelete && (made == nil || len(gone) > 0) {
		if err := o.rec.add(it.Family, it.Table, gone); err != nil {
			return recordState{}, err
		}
		p.added = made == nil
	}
	return p, nil
}

// finish follows an operation that ran with err: a delete that succeeded
// forgets the table; a create or modify that failed leaving no table of
// netagent's there takes back the record it added.
func (o *owning) finish(op reconciler.Operation, it *items.NftTable, p recordState, err error) error {
	switch {
	case op == reconciler.OpDelete && err == nil && p.recorded:
		return o.rec.remove(it.Name())
	case op != reconciler.OpDelete && err != nil && p.added:
		if _, marked, _, _, lerr := o.look(it); lerr == nil && !marked {
			return errors.Join(err, o.rec.remove(it.Name()))
		}
	}
	return err
}

// run is one operation: prepare, do, finish.
func (o *owning) run(op reconciler.Operation, it *items.NftTable, do func() error) error {
	p, err := o.prepare(op, it)
	if err != nil {
		return err
	}
	return o.finish(op, it, p, do())
}

// Create makes the table after recording it.
func (o *owning) Create(ctx context.Context, item dg.Item) error {
	it := item.(*items.NftTable)
	return o.run(reconciler.OpCreate, it, func() error { return o.inner.Create(ctx, it) })
}

// Modify replaces the table, recording it first if it is not.
func (o *owning) Modify(ctx context.Context, oldItem, newItem dg.Item) error {
	it := newItem.(*items.NftTable)
	return o.run(reconciler.OpModify, it, func() error { return o.inner.Modify(ctx, oldItem, it) })
}

// Delete deletes the table if it is netagent's, then forgets it.
func (o *owning) Delete(ctx context.Context, item dg.Item) error {
	it := item.(*items.NftTable)
	return o.run(reconciler.OpDelete, it, func() error { return o.inner.Delete(ctx, it) })
}

// owningBatch is owning over a table configurator that takes batches:
// the operations prepare refuses are left out of the inner batch.
type owningBatch struct {
	*owning
	batch reconciler.BatchConfigurator
}

var _ reconciler.BatchConfigurator = owningBatch{}

// ApplyBatch prepares every operation, runs those prepared in one inner
// batch, and finishes each.
func (o owningBatch) ApplyBatch(ctx context.Context, ops []reconciler.BatchOp) []error {
	errs := make([]error, len(ops))
	ps := make([]recordState, len(ops))
	var run []reconciler.BatchOp
	var at []int
	for i, op := range ops {
		if ps[i], errs[i] = o.prepare(op.Op, batchTable(op)); errs[i] == nil {
			run, at = append(run, op), append(at, i)
		}
	}
	if len(run) == 0 {
		return errs
	}
	for j, err := range o.batch.ApplyBatch(ctx, run) {
		i := at[j]
		errs[i] = o.finish(ops[i].Op, batchTable(ops[i]), ps[i], err)
	}
	return errs
}

// batchTable is the table of a batched operation.
func batchTable(op reconciler.BatchOp) *items.NftTable {
	if op.New != nil {
		return op.New.(*items.NftTable)
	}
	return op.Old.(*items.NftTable)
}

// NeedsRecreate is the table configurator's.
func (o *owning) NeedsRecreate(oldItem, newItem dg.Item) bool {
	return o.inner.NeedsRecreate(oldItem, newItem)
}
