package nftables

import (
	"errors"
	"fmt"
	"slices"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/items"
)

// Clashes finds the tables of hint (the intended graph) whose family and
// name a table without netagent's mark already has, and returns for each
// the error its create or modify fails with, before any write: a
// ClashError, or a MarkLostError for a table the state directory records
// as netagent's. On a kernel without nf_tables every intended table fails
// with ErrNoNftables. It is the configurator's check for `plan`, which
// predicts these failures.
func Clashes(t *netnsx.Target, stateDir string, hint *dg.Graph) (map[dg.ItemRef]error, error) {
	want := intendedTables(hint)
	if len(want) == 0 {
		return nil, nil
	}
	rec, err := newRecords(t, stateDir)
	if err != nil {
		return nil, err
	}
	return clashes(readerOf(t), rec, want)
}

// intendedTables are hint's tables (none for nil).
func intendedTables(hint *dg.Graph) []*items.NftTable {
	if hint == nil {
		return nil
	}
	var out []*items.NftTable
	for it := range hint.Items() {
		if tab, ok := it.(*items.NftTable); ok {
			out = append(out, tab)
		}
	}
	return out
}

func clashes(r tableReader, rec *records, want []*items.NftTable) (map[dg.ItemRef]error, error) {
	foreign, err := foreignTables(r, rec)
	out := make(map[dg.ItemRef]error)
	if errors.Is(err, ErrNoNftables) {
		for _, it := range want {
			out[dg.Ref(it)] = fmt.Errorf("creating nftables table %s: %w", it.Name(), err)
		}
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, it := range want {
		if i := slices.IndexFunc(foreign, func(f ForeignTable) bool { return f.ID() == it.Name() }); i >= 0 {
			out[dg.Ref(it)] = notOwned(it, foreign[i].MarkLost)
		}
	}
	return out, nil
}

// ForeignTable is a table that is not netagent's, as `show --all` lists
// it: its family and name, and, when the state directory records it as
// made by netagent (its mark is gone: see MarkLostError), when.
type ForeignTable struct {
	Family, Name string
	MarkLost     *time.Time
}

// ID is "<family>/<name>".
func (f ForeignTable) ID() string { return f.Family + "/" + f.Name }

// ReadForeign returns the tables in namespace t without netagent's mark,
// read by name only (none on a kernel without nf_tables).
func ReadForeign(t *netnsx.Target, stateDir string) ([]ForeignTable, error) {
	rec, err := newRecords(t, stateDir)
	if err != nil {
		return nil, err
	}
	return readForeign(readerOf(t), rec)
}

func readForeign(r tableReader, rec *records) ([]ForeignTable, error) {
	out, err := foreignTables(r, rec)
	if errors.Is(err, ErrNoNftables) {
		return nil, nil
	}
	return out, err
}

// foreignTables are the tables without the mark, each with its record.
func foreignTables(r tableReader, rec *records) ([]ForeignTable, error) {
	ts, err := r.Tables()
	if err != nil {
		return nil, err
	}
	recorded, err := rec.get()
	if err != nil {
		return nil, err
	}
	var out []ForeignTable
	for _, t := range ts {
		if t.Marked {
			continue
		}
		f := ForeignTable{Family: t.Family, Name: t.Name}
		if m, ok := recorded[t.ID()]; ok {
			f.MarkLost = &m.Made
		}
		out = append(out, f)
	}
	return out, nil
}
