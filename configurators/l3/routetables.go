package l3

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/netnsx"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
	"golang.org/x/sys/unix"
)

// The route tables netagent has written, so that a read-back dumps only
// those.
//
// The kernel answers a strict route dump filtered by protocol alone by
// walking every table (inet_dump_fib, inet6_dump_fib: each table's every
// route is looked at and the others' skipped), which at a million
// foreign routes costs a read-back a quarter of a second of kernel time
// though nothing is sent. A strict dump with rtm_table or RTA_TABLE set
// walks that table alone (ip_valid_fib_dump_req, fib_get_table;
// fib6_get_table), so the read-back asks for netagent's protocol in the
// tables where its routes can be: those netagent wrote a route in, kept
// in <stateDir>/route-tables.json per namespace instance
// (statefile.NsIdentity), and those the intended routes name. A route
// batch records the tables of its creates and modifies before it writes
// them (a table stays recorded while it may hold one of ours), and drops
// the tables its deletes emptied of netagent's routes: a table taken out
// of the intent stays in the record until its routes are gone.
//
// The record is a cache: read as untrusted input (at most
// maxRecordedTables tables, none 0), and when it is lost, damaged or
// over its bound the read-back dumps every table (filtered by protocol,
// as without a state directory) until a writer (a route batch, or
// KeepRouteTables at an apply's or the daemon's read-back) rebuilds it
// from such a dump. Rules and their tables need no entry: the rule dump
// is its own, and a rule's table holds netagent's routes only where a
// route was written.

// routeTableFile is the record's file in the state directory.
const routeTableFile = "route-tables.json"

// maxRecordedTables bounds the tables of one namespace's entry.
const maxRecordedTables = 4096

// maxRecordEntries bounds the namespace entries the file holds.
const maxRecordEntries = 4096

// routeTablesFile is the file: one entry per namespace instance.
type routeTablesFile struct {
	Namespaces []nsTables `json:"namespaces"`
}

// nsTables is one namespace instance's tables, sorted.
type nsTables struct {
	statefile.NsIdentity
	Tables []uint32 `json:"tables"`
}

// tableRecord is one namespace's entry of the record; nil (no state
// directory) records nothing and knows nothing.
type tableRecord struct {
	path string
	ns   statefile.NsIdentity
}

// newTableRecord returns the record of the namespace ns in stateDir, nil
// for "".
func newTableRecord(stateDir string, ns statefile.NsIdentity) *tableRecord {
	if stateDir == "" {
		return nil
	}
	return &tableRecord{path: filepath.Join(stateDir, routeTableFile), ns: ns}
}

// errNoTableRecord: the namespace has no entry (none written yet, another
// boot, the namespace made again).
var errNoTableRecord = errors.New("no entry for this namespace")

// get returns the namespace's tables; an error (errNoTableRecord, a
// damaged file, an entry out of bounds) says why the record cannot be
// used: the caller then dumps every table.
func (r *tableRecord) get() ([]uint32, error) {
	if r == nil {
		return nil, errNoTableRecord
	}
	var f routeTablesFile
	ok, err := statefile.LoadJSON(r.path, &f)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, errNoTableRecord
	}
	if len(f.Namespaces) > maxRecordEntries {
		return nil, fmt.Errorf("%s: %d namespaces, more than %d", r.path, len(f.Namespaces), maxRecordEntries)
	}
	for i, e := range f.Namespaces {
		if e.NsIdentity != r.ns {
			continue
		}
		if err := checkTables(e.Tables); err != nil {
			return nil, fmt.Errorf("%s: namespaces[%d].tables: %w", r.path, i, err)
		}
		return e.Tables, nil
	}
	return nil, errNoTableRecord
}

// checkTables reports what makes a list of tables read from disk unusable.
func checkTables(tables []uint32) error {
	if len(tables) > maxRecordedTables {
		return fmt.Errorf("%d tables, more than %d", len(tables), maxRecordedTables)
	}
	if i := slices.Index(tables, 0); i >= 0 {
		return fmt.Errorf("[%d]: table 0 is no table", i)
	}
	return nil
}

// update replaces the namespace's entry with f's tables (f gets the
// entry's, and whether there was a usable one), under the file's lock,
// and drops the entries of other boots. A damaged file is started anew:
// the record is a cache, and the other namespaces' entries are rebuilt
// by their next writer. Tables beyond maxRecordedTables leave the
// namespace without an entry (every table is dumped).
func (r *tableRecord) update(f func(tables []uint32, ok bool) ([]uint32, error)) error {
	if r == nil {
		return nil
	}
	defer statefile.Lock(r.path)()
	var file routeTablesFile
	if _, err := statefile.LoadJSON(r.path, &file); err != nil {
		file = routeTablesFile{} // damaged: begun anew
	}
	var kept []nsTables
	var mine []uint32
	found := false
	for _, e := range file.Namespaces {
		switch {
		case e.NsIdentity == r.ns:
			mine, found = e.Tables, checkTables(e.Tables) == nil
		case e.BootID == r.ns.BootID && len(kept) < maxRecordEntries-1:
			kept = append(kept, e)
		}
	}
	if !found {
		mine = nil
	}
	tables, err := f(mine, found)
	if err != nil {
		return err
	}
	tables = sortedTables(tables)
	if found && slices.Equal(tables, mine) {
		return nil
	}
	if checkTables(tables) == nil {
		kept = append(kept, nsTables{NsIdentity: r.ns, Tables: tables})
	}
	file.Namespaces = kept
	if err := statefile.SaveJSON(r.path, &file); err != nil {
		return fmt.Errorf("writing %s: %w", r.path, err)
	}
	return nil
}

// sortedTables is tables sorted, without duplicates and without 0 (a
// copy: never the caller's slice).
func sortedTables(tables []uint32) []uint32 {
	out := slices.DeleteFunc(slices.Clone(tables), func(t uint32) bool { return t == 0 })
	slices.Sort(out)
	return slices.Compact(out)
}

// recordTables adds tables (those a batch is about to write a route in)
// to conn's record, rebuilding a lost one first from a dump of every
// table (rebuildTables) so that the entry never misses a table of ours.
func recordTables(conn rawOps, tables []uint32) error {
	rec := conn.tableRecord()
	if rec == nil || len(tables) == 0 {
		return nil
	}
	err := rec.update(func(have []uint32, ok bool) ([]uint32, error) {
		if ok {
			return append(have, tables...), nil
		}
		found, err := ownTablesInKernel(conn)
		return append(found, tables...), err
	})
	if err != nil {
		return fmt.Errorf("recording route tables %v: %w", tables, err)
	}
	return nil
}

// forgetEmptied drops from conn's record those of tables (the tables of a
// batch's deletes) that hold none of netagent's routes any more, asking
// the kernel table by table. A table still holding one, or one the
// kernel could not be asked about, stays.
func forgetEmptied(conn rawOps, tables []uint32) error {
	rec := conn.tableRecord()
	if rec == nil || len(tables) == 0 {
		return nil
	}
	var empty []uint32
	for _, t := range sortedTables(tables) {
		n := 0
		f := routeFilter{table: t, proto: items.RouteProtocol}
		if err := eachRouteIn(conn, unix.AF_UNSPEC, []routeFilter{f}, func(*routeMsg) { n++ }, func() { n = 0 }); err == nil && n == 0 {
			empty = append(empty, t)
		}
	}
	if len(empty) == 0 {
		return nil
	}
	return rec.update(func(have []uint32, ok bool) ([]uint32, error) {
		if !ok {
			return nil, errNoTableRecord // nothing to drop: left lost
		}
		return slices.DeleteFunc(have, func(t uint32) bool { return slices.Contains(empty, t) }), nil
	})
}

// ownTablesInKernel dumps netagent's routes of every table and returns
// the tables they are in.
func ownTablesInKernel(conn rawOps) ([]uint32, error) {
	var tables []uint32
	f := routeFilter{proto: items.RouteProtocol}
	err := eachRouteIn(conn, unix.AF_UNSPEC, []routeFilter{f}, func(m *routeMsg) {
		tables = appendTable(tables, m.Table)
	}, func() { tables = tables[:0] })
	return tables, err
}

// KeepRouteTables rebuilds the namespace's record of the route tables
// netagent has written (see above) when it is lost or damaged, from a
// dump of netagent's routes in every table, and returns a note saying so
// ("" when the record was whole). A writer (an apply, the daemon) calls
// it before its read-back; dry runs never do (they dump every table while
// the record is unusable). Without a state directory it does nothing.
func KeepRouteTables(t *netnsx.Target, stateDir string) (string, error) {
	if stateDir == "" {
		return "", nil
	}
	conn, err := openConnIn(t, stateDir)
	if err != nil {
		return "", fmt.Errorf("route table record: %w", err)
	}
	defer conn.close()
	return keepRouteTables(conn)
}

// keepRouteTables is KeepRouteTables over conn.
func keepRouteTables(conn rawOps) (string, error) {
	rec := conn.tableRecord()
	if rec == nil {
		return "", nil
	}
	_, why := rec.get()
	if why == nil {
		return "", nil
	}
	err := rec.update(func(have []uint32, ok bool) ([]uint32, error) {
		if ok { // another writer rebuilt it meanwhile
			return have, nil
		}
		return ownTablesInKernel(conn)
	})
	if err != nil {
		return "", fmt.Errorf("rebuilding the route table record %s: %w", rec.path, err)
	}
	return fmt.Sprintf("route table record %s could not be used (%v): read netagent's routes of every table and rebuilt it", rec.path, why), nil
}

// KeepRouteTables is KeepRouteTables over the fake (its UseStateDir).
func (k *FakeKernel) KeepRouteTables() (string, error) { return keepRouteTables(k) }

// readFilters are the dumps of a read-back of netagent's routes: one per
// table of the record and of hint's routes (see above), or one of every
// table when the record cannot be used or names more than
// maxFilteredTables tables with hint's.
func readFilters(conn rawOps, hint *dg.Graph) []routeFilter {
	recorded, err := conn.tableRecord().get()
	if err != nil {
		return []routeFilter{{proto: items.RouteProtocol}}
	}
	tables := slices.Clone(recorded)
	if hint != nil {
		for it := range hint.Unordered() {
			if r, ok := it.(*items.Route); ok {
				tables = append(tables, r.TableID())
			}
		}
	}
	return tableFilters(conn, items.RouteProtocol, tables)
}

// maxFilteredTables is how many tables a dump asks the kernel for one by
// one (tableFilters); more, and it dumps every table at once. A dump of a
// table costs a request and its answer (about 10 µs for an empty one).
const maxFilteredTables = 256

// tableFilters returns the dumps of proto's routes (0: any protocol's) in
// the given tables (duplicates allowed; none: no dump): one per table
// where the kernel filters dumps (strict checking), else, or for more
// than maxFilteredTables, one of every table that keeps only those
// tables while read.
func tableFilters(conn rawOps, proto uint8, tables []uint32) []routeFilter {
	tables = sortedTables(tables)
	if len(tables) == 0 {
		return nil
	}
	if len(tables) > maxFilteredTables || !conn.kernelFilters() {
		return []routeFilter{{proto: proto, in: tables}}
	}
	out := make([]routeFilter, len(tables))
	for i, t := range tables {
		out[i] = routeFilter{table: t, proto: proto}
	}
	return out
}

func init() {
	statefile.RegisterCache(routeTableFile, "the route tables netagent wrote a route in, in each namespace, so that "+
		"read-backs dump only those (lost: every table is dumped until a writer rebuilds it)")
}
