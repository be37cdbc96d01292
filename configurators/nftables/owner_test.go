package nftables

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	dg "github.com/netagent/netagent/depgraph"
	"github.com/netagent/netagent/internal/statefile"
	"github.com/netagent/netagent/items"
	"github.com/netagent/netagent/reconciler"
)

// fakeReader is the kernel's tables as tableReader reads them: each
// table with its mark, each base chain with its rules (true: the rule
// drops).
type fakeReader struct {
	tables []TableInfo
	chains []readerChain
	err    error
}

type readerChain struct {
	BaseChain
	rules []bool
}

func (f *fakeReader) Tables() ([]TableInfo, error) { return slices.Clone(f.tables), f.err }

func (f *fakeReader) BaseChains(keep func(TableInfo, BaseChain) bool, budget int) ([]BaseChain, error) {
	if f.err != nil {
		return nil, f.err
	}
	var out []BaseChain
	for _, c := range f.chains {
		i := slices.IndexFunc(f.tables, func(t TableInfo) bool { return t.Family == c.Family && t.Name == c.Table })
		if i < 0 || !keep(f.tables[i], c.BaseChain) {
			continue
		}
		bc := c.BaseChain
		switch {
		case bc.PolicyDrop:
		case budget <= 0:
			bc.Unread = true
		default:
			bc.Rules = len(c.rules)
			for _, drop := range c.rules[:min(len(c.rules), budget)] {
				bc.Inspected++
				if drop {
					bc.DropRules++
				}
			}
			budget -= bc.Inspected
		}
		out = append(out, bc)
	}
	return out, nil
}

// set puts the table into the fake (marked or not); remove takes it out.
func (f *fakeReader) set(family, name string, marked bool) {
	f.remove(family, name)
	f.tables = append(f.tables, TableInfo{Family: family, Name: name, Marked: marked})
}

func (f *fakeReader) remove(family, name string) {
	f.tables = slices.DeleteFunc(f.tables, func(t TableInfo) bool { return t.Family == family && t.Name == name })
}

// fakeTables is the inner table configurator over fakeReader: a create
// makes the table marked, a delete removes it; before each it calls seen
// (to look at the record then), and fails with fail when set.
type fakeTables struct {
	r    *fakeReader
	seen func(op string)
	fail error
	ops  []string
}

func (c *fakeTables) do(op string, it *items.NftTable, after func()) error {
	c.ops = append(c.ops, op+" "+it.Name())
	if c.seen != nil {
		c.seen(op)
	}
	if c.fail != nil {
		return c.fail
	}
	after()
	return nil
}

func (c *fakeTables) Create(_ context.Context, item dg.Item) error {
	it := item.(*items.NftTable)
	return c.do("create", it, func() { c.r.set(it.Family, it.Table, true) })
}

func (c *fakeTables) Modify(_ context.Context, _, item dg.Item) error {
	it := item.(*items.NftTable)
	return c.do("modify", it, func() { c.r.set(it.Family, it.Table, true) })
}

func (c *fakeTables) Delete(_ context.Context, item dg.Item) error {
	it := item.(*items.NftTable)
	return c.do("delete", it, func() { c.r.remove(it.Family, it.Table) })
}

func (c *fakeTables) NeedsRecreate(_, _ dg.Item) bool { return false }

var testNs = statefile.NsIdentity{BootID: "boot-1", Netns: "t", NsID: "NS(0:1)"}

// newOwning is the owning configurator over a fake reader, with its
// record in a new state directory.
func newOwning(t *testing.T) (*owning, *fakeReader, *fakeTables) {
	t.Helper()
	r := &fakeReader{}
	inner := &fakeTables{r: r}
	made := time.Date(2026, 12, 2, 20, 0, 0, 0, time.UTC)
	rec := &records{path: filepath.Join(t.TempDir(), recordFileName), ns: testNs, now: func() time.Time { return made }}
	return &owning{inner: inner, tables: r, rec: rec}, r, inner
}

func recordedIDs(t *testing.T, rec *records) []string {
	t.Helper()
	got, err := rec.get()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for id := range got {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

var nat = &items.NftTable{Family: "inet", Table: "netagent"}

// The record holds the table before its create runs and until its
// delete has run; the create, modify and delete run once each; a record of
// another namespace instance is neither read nor kept past the next
// boot's write.
func TestRecordAroundCreateAndDelete(t *testing.T) {
	o, _, inner := newOwning(t)
	other := &records{path: o.rec.path, ns: statefile.NsIdentity{BootID: "boot-0", Netns: "t", NsID: "NS(0:1)"}, now: time.Now}
	if err := other.add("ip", "old", nil); err != nil {
		t.Fatal(err)
	}
	var during []string
	inner.seen = func(op string) { during = append(during, op+":"+joinIDs(recordedIDs(t, o.rec))) }
	ctx := context.Background()
	if err := o.Create(ctx, nat); err != nil {
		t.Fatal(err)
	}
	if err := o.Modify(ctx, nat, nat); err != nil {
		t.Fatal(err)
	}
	if got := recordedIDs(t, o.rec); !slices.Equal(got, []string{"inet/netagent"}) {
		t.Errorf("recorded after the create: %v", got)
	}
	if err := o.Delete(ctx, nat); err != nil {
		t.Fatal(err)
	}
	want := []string{"create:inet/netagent", "modify:inet/netagent", "delete:inet/netagent"}
	if !slices.Equal(during, want) {
		t.Errorf("records seen by the operations: %v, want %v", during, want)
	}
	if got := recordedIDs(t, o.rec); len(got) != 0 {
		t.Errorf("recorded after the delete: %v", got)
	}
	var file recordFile
	if _, err := statefile.LoadJSON(o.rec.path, &file); err != nil || len(file.Namespaces) != 0 {
		t.Errorf("record file after the delete: %+v, %v; want no namespaces (the other boot's pruned)", file, err)
	}
}

func joinIDs(ids []string) string {
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += ","
		}
		out += id
	}
	return out
}

// A table of the intent's name without the mark is refused before any
// write: a ClashError when netagent never recorded it (and no record is
// written), a MarkLostError when it did (the record is kept, so every
// apply, plan and show --all report it); neither runs the inner
// configurator, and a delete does not take it.
func TestUnmarkedTableRefused(t *testing.T) {
	ctx := context.Background()
	o, r, inner := newOwning(t)
	r.set("inet", "netagent", false)
	var clash *ClashError
	if err := o.Create(ctx, nat); !errors.As(err, &clash) {
		t.Fatalf("create over someone's table: %v, want a ClashError", err)
	}
	if got := recordedIDs(t, o.rec); len(got) != 0 {
		t.Errorf("a refused create recorded %v", got)
	}

	r.remove("inet", "netagent")
	if err := o.Create(ctx, nat); err != nil {
		t.Fatal(err)
	}
	r.set("inet", "netagent", false) // someone deleted it and made their own
	for name, op := range map[string]func() error{
		"create": func() error { return o.Create(ctx, nat) },
		"modify": func() error { return o.Modify(ctx, nat, nat) },
		"delete": func() error { return o.Delete(ctx, nat) },
	} {
		var lost *MarkLostError
		if err := op(); !errors.As(err, &lost) || lost.Table != "inet/netagent" || lost.Made.IsZero() {
			t.Errorf("%s of a recorded table without its mark: %v, want a MarkLostError", name, err)
		}
	}
	if !slices.Equal(inner.ops, []string{"create inet/netagent"}) {
		t.Errorf("inner operations: %v, want the one create", inner.ops)
	}
	if got := recordedIDs(t, o.rec); !slices.Equal(got, []string{"inet/netagent"}) {
		t.Errorf("record after the refusals: %v, want it kept", got)
	}

	got, err := clashes(r, o.rec, []*items.NftTable{nat, {Family: "ip", Table: "free"}})
	var lost *MarkLostError
	if err != nil || len(got) != 1 || !errors.As(got[dg.Ref(nat)], &lost) {
		t.Errorf("clashes: %v, %v; want the MarkLostError of inet/netagent only", got, err)
	}
	r.set("ip", "theirs", false)
	r.set("ip", "mine", true)
	foreign, err := readForeign(r, o.rec)
	if err != nil || len(foreign) != 2 || foreign[0].ID() != "inet/netagent" || foreign[0].MarkLost == nil ||
		foreign[1].ID() != "ip/theirs" || foreign[1].MarkLost != nil {
		t.Errorf("foreign tables: %+v, %v; want inet/netagent (mark lost) and ip/theirs", foreign, err)
	}
}

// A record whose table is gone is dropped at the next write; a create
// that fails without making the table takes its new record back.
func TestRecordCleaned(t *testing.T) {
	ctx := context.Background()
	o, r, inner := newOwning(t)
	if err := o.Create(ctx, nat); err != nil {
		t.Fatal(err)
	}
	r.remove("inet", "netagent") // nft flush ruleset
	other := &items.NftTable{Family: "ip", Table: "b"}
	if err := o.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	if got := recordedIDs(t, o.rec); !slices.Equal(got, []string{"ip/b"}) {
		t.Errorf("records: %v, want only ip/b", got)
	}
	inner.fail = errors.New("batch refused")
	if err := o.Create(ctx, &items.NftTable{Family: "ip6", Table: "c"}); !errors.Is(err, inner.fail) {
		t.Fatalf("failed create: %v", err)
	}
	if got := recordedIDs(t, o.rec); !slices.Equal(got, []string{"ip/b"}) {
		t.Errorf("records after a failed create: %v, want only ip/b", got)
	}
	r.set("inet", "netagent", false) // not recorded any more: a plain clash
	var clash *ClashError
	if err := o.Create(ctx, nat); !errors.As(err, &clash) {
		t.Errorf("create over an unrecorded unmarked table: %v, want a ClashError", err)
	}
}

// An entry of the record that names no table (the file is not trusted)
// is ignored.
func TestRecordValidated(t *testing.T) {
	o, _, _ := newOwning(t)
	bad := recordFile{Namespaces: []nsTables{{NsIdentity: testNs, Tables: []MadeTable{
		{Family: "arp", Name: "x"}, {Family: "inet", Name: ""}, {Family: "ip", Name: "ok"}}}}}
	if err := statefile.SaveJSON(o.rec.path, bad); err != nil {
		t.Fatal(err)
	}
	if got := recordedIDs(t, o.rec); !slices.Equal(got, []string{"ip/ok"}) {
		t.Errorf("valid records: %v, want only ip/ok", got)
	}
}

// On a kernel without nf_tables plan predicts that every intended table
// fails with ErrNoNftables, and show --all finds no foreign table.
func TestClashesWithoutNftables(t *testing.T) {
	r := &fakeReader{err: ErrNoNftables}
	got, err := clashes(r, nil, []*items.NftTable{nat})
	if err != nil || !errors.Is(got[dg.Ref(nat)], ErrNoNftables) {
		t.Errorf("clashes without nf_tables: %v, %v", got, err)
	}
	if f, err := readForeign(r, nil); err != nil || len(f) != 0 {
		t.Errorf("foreign tables without nf_tables: %v, %v", f, err)
	}
}

// fakeBatchTables is fakeTables taking batches.
type fakeBatchTables struct {
	*fakeTables
	batches [][]string
}

func (c *fakeBatchTables) ApplyBatch(ctx context.Context, ops []reconciler.BatchOp) []error {
	var names []string
	errs := make([]error, len(ops))
	for i, op := range ops {
		it := batchTable(op)
		names = append(names, op.Op.String()+" "+it.Name())
		switch op.Op {
		case reconciler.OpCreate:
			errs[i] = c.Create(ctx, it)
		case reconciler.OpModify:
			errs[i] = c.Modify(ctx, op.Old, it)
		default:
			errs[i] = c.Delete(ctx, it)
		}
	}
	c.batches = append(c.batches, names)
	return errs
}

// Over a configurator that takes batches the records stay around one
// batch: a refused operation is left out of it, the others run in it, a
// delete's record goes after it.
func TestRecordAroundBatch(t *testing.T) {
	ctx := context.Background()
	o, r, inner := newOwning(t)
	bi := &fakeBatchTables{fakeTables: inner}
	c, ok := wrap(bi, r, o.rec).(reconciler.BatchConfigurator)
	if !ok {
		t.Fatal("wrap of a batch configurator takes no batches")
	}
	old := &items.NftTable{Family: "ip", Table: "old"}
	if err := c.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	r.set("ip", "theirs", false)
	theirs := &items.NftTable{Family: "ip", Table: "theirs"}
	errs := c.ApplyBatch(ctx, []reconciler.BatchOp{
		{Op: reconciler.OpCreate, New: nat}, {Op: reconciler.OpCreate, New: theirs}, {Op: reconciler.OpDelete, Old: old}})
	var clash *ClashError
	if errs[0] != nil || !errors.As(errs[1], &clash) || errs[2] != nil {
		t.Errorf("batch errors: %v", errs)
	}
	if len(bi.batches) != 1 || !slices.Equal(bi.batches[0], []string{"create inet/netagent", "delete ip/old"}) {
		t.Errorf("inner batches: %v", bi.batches)
	}
	if got := recordedIDs(t, o.rec); !slices.Equal(got, []string{"inet/netagent"}) {
		t.Errorf("records after the batch: %v", got)
	}
}
