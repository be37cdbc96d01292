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
	if err := Register(scratch, t); err != nil {
		return err
	}
	inner := scratch.Configurator(&items.NftTable{})
	return reg.Register(items.TypeNftTable, &owning{inner: inner, tables: readerOf(t), rec: rec})
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

// write records it (unless recorded already), then runs do; a do that
// fails leaving no table of netagent's there takes the new record back.
func (o *owning) write(it *items.NftTable, do func() error) error {
	exists, marked, made, gone, err := o.look(it)
	if err != nil {
		return err
	}
	if exists && !marked {
		return notOwned(it, made.when())
	}
	if made == nil || len(gone) > 0 {
		if err := o.rec.add(it.Family, it.Table, gone); err != nil {
			return err
		}
	}
	err = do()
	if err != nil && made == nil {
		if _, marked, _, _, lerr := o.look(it); lerr == nil && !marked {
			err = errors.Join(err, o.rec.remove(it.Name()))
		}
	}
	return err
}

// Create makes the table after recording it.
func (o *owning) Create(ctx context.Context, item dg.Item) error {
	it := item.(*items.NftTable)
	return o.write(it, func() error { return o.inner.Create(ctx, it) })
}

// Modify replaces the table, recording it first if it is not.
func (o *owning) Modify(ctx context.Context, oldItem, newItem dg.Item) error {
	it := newItem.(*items.NftTable)
	return o.write(it, func() error { return o.inner.Modify(ctx, oldItem, it) })
}

// Delete deletes the table if it is netagent's, then forgets it.
func (o *owning) Delete(ctx context.Context, item dg.Item) error {
	it := item.(*items.NftTable)
	exists, marked, made, _, err := o.look(it)
	if err != nil {
		return err
	}
	if exists && !marked {
		return notOwned(it, made.when())
	}
	if err := o.inner.Delete(ctx, it); err != nil {
		return err
	}
	if made == nil {
		return nil
	}
	return o.rec.remove(it.Name())
}

// NeedsRecreate is the table configurator's.
func (o *owning) NeedsRecreate(oldItem, newItem dg.Item) bool {
	return o.inner.NeedsRecreate(oldItem, newItem)
}
